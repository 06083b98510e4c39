package jobspec

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"gopkg.in/yaml.v3"
)

// Resource types a rendered page may be kept from loading (block).
const (
	BlockImage      = "image"
	BlockFont       = "font"
	BlockMedia      = "media"
	BlockStylesheet = "stylesheet"
)

// BlockTypes lists the values block may hold.
var BlockTypes = []string{BlockImage, BlockFont, BlockMedia, BlockStylesheet}

// DefaultBlock is what a rendered page does not load unless block says
// otherwise: nothing a field or a link is read from.
var DefaultBlock = []string{BlockImage, BlockFont, BlockMedia}

// Bounds and default of render_timeout.
const (
	DefaultRenderTimeout = Duration(30 * time.Second)
	MinRenderTimeout     = Duration(time.Second)
	MaxRenderTimeout     = Duration(5 * time.Minute)
)

// RenderSpec says whether and how pages are rendered in a headless browser
// before they are read: at the top of a job for every kind, or on one kind,
// whose settings win over the job's. Only what a kind sets overrides.
type RenderSpec struct {
	// Render runs the page's scripts in a headless browser and reads the
	// DOM they leave; nil inherits (the job's, then false).
	Render *bool `yaml:"render" json:"render,omitempty"`
	// WaitFor is what the page is read after: an element matching a CSS
	// selector, or a time after the load; nil waits for the network to go
	// quiet after the load (no request in flight for 500ms).
	WaitFor *WaitFor `yaml:"wait_for" json:"wait_for,omitempty"`
	// RenderTimeout bounds one rendering, wait included; 0 inherits
	// (the job's, then DefaultRenderTimeout).
	RenderTimeout Duration `yaml:"render_timeout" json:"render_timeout,omitempty"`
	// Block lists the resource types the page may not load; nil inherits
	// (the job's, then DefaultBlock), and [] blocks nothing.
	Block []string `yaml:"block" json:"block"`
}

// WaitFor is what a rendered page waits for once loaded: an element
// matching CSS, or, when CSS is empty, the time Delay.
type WaitFor struct {
	CSS   string   `yaml:"css" json:"css,omitempty"`
	Delay Duration `yaml:"-" json:"delay,omitempty"`
}

// UnmarshalYAML reads wait_for written as a duration ("2s") or as
// {css: SELECTOR}.
func (w *WaitFor) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		d, err := parseDuration(n.Value)
		if err != nil {
			return &nodeError{line: n.Line, column: n.Column, err: fmt.Errorf("wait_for: %w, or {css: SELECTOR}", err)}
		}
		*w = WaitFor{Delay: d}
		return nil
	case yaml.MappingNode:
		var out struct {
			CSS string `yaml:"css"`
		}
		if len(n.Content) != 2 || n.Content[0].Value != "css" {
			return &nodeError{line: n.Line, column: n.Column, err: errors.New("wait_for: a duration or {css: SELECTOR}")}
		}
		if err := n.Decode(&out); err != nil {
			return err
		}
		*w = WaitFor{CSS: out.CSS}
		return nil
	}
	return &nodeError{line: n.Line, column: n.Column, err: errors.New("wait_for: a duration or {css: SELECTOR}")}
}

// Rendering is how one page is rendered: the settings of its kind over the
// job's, defaults filled in.
type Rendering struct {
	// WaitFor is what the page is read after, once loaded; zero: its
	// network going quiet.
	WaitFor WaitFor
	// Timeout bounds the rendering, wait included.
	Timeout time.Duration
	// Block lists the resource types the page may not load.
	Block []string
}

// RenderOf returns how pages of kind are rendered, and false when they are
// fetched as the server sends them.
func (s *Job) RenderOf(kind string) (Rendering, bool) {
	k := s.PageKinds()[kind].RenderSpec
	on := k.Render
	if on == nil {
		on = s.RenderSpec.Render
	}
	if on == nil || !*on || s.PageKinds()[kind].JSONPage() {
		return Rendering{}, false
	}
	r := Rendering{Timeout: DefaultRenderTimeout.Std(), Block: DefaultBlock}
	for _, spec := range []RenderSpec{s.RenderSpec, k} {
		if spec.WaitFor != nil {
			r.WaitFor = *spec.WaitFor
		}
		if spec.RenderTimeout != 0 {
			r.Timeout = spec.RenderTimeout.Std()
		}
		if spec.Block != nil {
			r.Block = spec.Block
		}
	}
	return r, true
}

// Renders reports whether any kind of the job is rendered.
func (s *Job) Renders() bool {
	return len(s.RenderKinds()) > 0
}

// RenderKinds is the set of the job's kinds whose pages are rendered.
func (s *Job) RenderKinds() map[string]bool {
	kinds := map[string]bool{}
	for name := range s.PageKinds() {
		if _, ok := s.RenderOf(name); ok {
			kinds[name] = true
		}
	}
	return kinds
}

// validate checks render settings; path is where they stand ("" at the top
// of a job, "kinds.product." on a kind).
func (r RenderSpec) validate(path string, jsonPage bool) error {
	if r.Render != nil && *r.Render && jsonPage {
		return fmt.Errorf("%srender: a format: json kind is read as JSON, not rendered", path)
	}
	if r.RenderTimeout != 0 && (r.RenderTimeout < MinRenderTimeout || r.RenderTimeout > MaxRenderTimeout) {
		return fmt.Errorf("%srender_timeout: %s is outside %s..%s", path, r.RenderTimeout, MinRenderTimeout, MaxRenderTimeout)
	}
	if w := r.WaitFor; w != nil {
		switch {
		case w.CSS == "" && w.Delay <= 0:
			return fmt.Errorf("%swait_for: give a duration above 0 or {css: SELECTOR}", path)
		case w.CSS != "":
			if err := checkSelector(w.CSS); err != nil {
				return fmt.Errorf("%swait_for.css: %w", path, err)
			}
		case w.Delay > MaxRenderTimeout:
			return fmt.Errorf("%swait_for: %s is longer than render_timeout may be (%s)", path, w.Delay, MaxRenderTimeout)
		}
	}
	for i, b := range r.Block {
		if !slices.Contains(BlockTypes, b) {
			return fmt.Errorf("%sblock[%d]: %q is not one of %v", path, i, b, BlockTypes)
		}
	}
	return nil
}

// validateRender checks the job's render settings and each kind's. A
// rendered page's requests go through the job's fetch path (its proxy
// choice included), so any proxy mode may be kept.
func (s *Job) validateRender() error {
	if err := s.RenderSpec.validate("", false); err != nil {
		return err
	}
	for _, name := range sortedKeys(s.Kinds) {
		k := s.Kinds[name]
		if err := k.RenderSpec.validate("kinds."+name+".", k.JSONPage()); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(s.PageKinds()) {
		r, ok := s.RenderOf(name)
		if !ok {
			continue
		}
		if r.WaitFor.Delay.Std() >= r.Timeout {
			return fmt.Errorf("%swait_for: %s is not shorter than its render_timeout %s", kindPath(s, name), r.WaitFor.Delay, r.Timeout)
		}
	}
	return nil
}

// kindPath is where a kind's settings stand in the job file: "kinds.NAME."
// for a job with kinds, "" for the short form (the job's own).
func kindPath(s *Job, name string) string {
	if s.ShortForm() {
		return ""
	}
	return "kinds." + name + "."
}
