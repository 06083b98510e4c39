package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// resolveFlags fills every flag not given on the command line from the
// environment (CRAWLER_<FLAG>) or, failing that, from the config file.
// known holds every flag name of every crawler command: a config file may
// be shared by a master and its slaves, so a key that only another command
// has is fine, but a key no command has (a typo such as concurency) is an
// error, as an unknown field of a job file is.
func resolveFlags(fs *pflag.FlagSet, configFile string, known map[string]bool) error {
	if configFile == "" {
		configFile = os.Getenv("CRAWLER_CONFIG")
	}
	file, err := readConfigFile(configFile)
	if err != nil {
		return err
	}
	if err := checkConfigKeys(configFile, file, known); err != nil {
		return err
	}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "config" {
			return
		}
		env := "CRAWLER_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", env, err))
			}
			return
		}
		if v, ok := lookupConfig(file, f.Name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("config %s: %s: %w", configFile, f.Name, err))
			}
		}
	})
	return errors.Join(errs...)
}

func readConfigFile(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var m map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return m, nil
}

// checkConfigKeys refuses keys that are no crawler flag, naming them.
func checkConfigKeys(path string, file map[string]any, known map[string]bool) error {
	var unknown []string
	for key := range file {
		if !known[strings.ReplaceAll(key, "_", "-")] {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("config %s: unknown key %s: keys are flag names (see crawler <command> --help)",
		path, strings.Join(unknown, ", "))
}

// knownFlags collects the flag names of every command under root.
func knownFlags(root *cobra.Command) map[string]bool {
	known := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return known
}

// lookupConfig finds a flag's value in the config file under its name, with
// dashes or underscores.
func lookupConfig(file map[string]any, name string) (string, bool) {
	for _, key := range []string{name, strings.ReplaceAll(name, "-", "_")} {
		v, ok := file[key]
		if !ok {
			continue
		}
		if list, isList := v.([]any); isList {
			parts := make([]string, len(list))
			for i, e := range list {
				parts[i] = fmt.Sprint(e)
			}
			return strings.Join(parts, ","), true
		}
		return fmt.Sprint(v), true
	}
	return "", false
}
