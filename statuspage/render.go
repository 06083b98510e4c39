package statuspage

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"time"
)

//go:embed assets
var assets embed.FS

// page is the status page's template. html/template escapes every value
// by where it lands (text, attribute, URL), job names and hosts included.
var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"num": formatInt, "fixed": fixed, "fixed0": func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) },
	"percent": percent, "mul100": func(f float64) float64 { return 100 * f },
	"add":   func(a, b float64) float64 { return a + b },
	"stamp": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"clock": func(t time.Time) string { return t.Local().Format("15:04:05") },
	"ago":   ago, "agoText": agoText, "ms": formatMS,
	"loadPct": func(s Slave) float64 { return 100 * s.Load() },
	"stale":   stale,
}).ParseFS(assets, "assets/page.html"))

// pageData is what the template renders.
type pageData struct {
	Snap          *Snapshot
	Err           string
	RefreshMS     int64
	ReloadSeconds int
}

// pageData prepares a snapshot for the template; without one (err) the
// page is rendered empty with the error.
func (h *handler) pageData(snap *Snapshot, err error) pageData {
	d := pageData{Snap: snap, RefreshMS: h.opts.Refresh.Milliseconds(),
		ReloadSeconds: max(5, int(h.opts.Refresh.Seconds()))}
	if err != nil {
		d.Err = "cannot read the cluster: " + err.Error()
		d.Snap = &Snapshot{Time: time.Now()}
	}
	return d
}

// formatInt writes n with thin spaces between thousands: 1 234 567.
func formatInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b bytes.Buffer
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u2009")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// stale says a slave is not live, or missed two heartbeats (it renews
// every third of its lease).
func stale(s Slave, leaseMS int64) bool { return !s.Live || 3*s.HeartbeatAgeMS > 2*leaseMS }

func fixed(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func percent(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) + "%" }

// ago says how long before now t was: "4s ago", "3m ago", "2h ago".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatAge(now.Sub(t)) + " ago"
}

// agoText is ago for a timestamp kept as RFC 3339 text; text that is not
// one is shown as it is.
func agoText(s string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return ago(t, now)
}

// formatAge rounds d to its largest unit or two: 45s, 3m, 2h5m, 3d.
func formatAge(d time.Duration) string {
	switch s := int64(max(0, d.Seconds())); {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	default:
		return fmt.Sprintf("%dd", s/86400)
	}
}

// formatMS writes a short duration in milliseconds: 350ms, 1.2s, 3m.
func formatMS(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	if ms < 60000 {
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	}
	return formatAge(time.Duration(ms) * time.Millisecond)
}

// staticHandler serves the embedded script and stylesheet with an ETag,
// so a browser revalidates them cheaply and never runs a stale script.
func staticHandler() http.Handler {
	type asset struct {
		body []byte
		etag string
	}
	files := map[string]asset{}
	for _, name := range []string{"app.js", "actions.js", "style.css"} {
		body, err := assets.ReadFile(path.Join("assets", name))
		if err != nil {
			panic(err) // embedded at build time
		}
		sum := sha256.Sum256(body)
		files[name] = asset{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", a.etag)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(a.body))
	})
}
