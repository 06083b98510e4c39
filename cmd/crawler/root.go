package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"gopkg.in/yaml.v3"
)

// globals are the flags every subcommand has.
type globals struct {
	configFile string
	logLevel   string
	logFormat  string
	logger     *zap.Logger
}

var global globals

// Execute runs the root command and exits non-zero on error.
func Execute() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "crawler:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "crawler",
		Short: "A distributed web crawler: master, slaves and client, coordinated through Redis",
		Long: `crawler runs a master/slave crawling cluster coordinated through Redis.
Every flag can also be set as CRAWLER_<FLAG> in the environment (CRAWLER_REDIS,
CRAWLER_LOG_LEVEL, ...) or as a key in the YAML file given with --config.
Precedence: flag > environment > config file > default.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: setup,
		PersistentPostRun: func(*cobra.Command, []string) {
			if global.logger != nil {
				_ = global.logger.Sync()
			}
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&global.configFile, "config", "", "YAML config file whose keys are flag names")
	pf.StringVar(&global.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&global.logFormat, "log-format", "console", "log format: console or json")

	root.AddCommand(newVersionCmd(), newBenchCmd())
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands are registered by the files that define them, so each
// subcommand lives in a file of its own.
var subcommands []func() *cobra.Command

func setup(cmd *cobra.Command, _ []string) error {
	if err := resolveFlags(cmd.Flags(), global.configFile); err != nil {
		return err
	}
	logger, err := newLogger(global.logLevel, global.logFormat)
	if err != nil {
		return err
	}
	global.logger = logger
	return nil
}

// resolveFlags fills every flag not given on the command line from the
// environment (CRAWLER_<FLAG>) or, failing that, from the config file.
func resolveFlags(fs *pflag.FlagSet, configFile string) error {
	if configFile == "" {
		configFile = os.Getenv("CRAWLER_CONFIG")
	}
	file, err := readConfigFile(configFile)
	if err != nil {
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
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return m, nil
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

func newLogger(level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	var cfg zap.Config
	switch format {
	case "console":
		cfg = zap.NewDevelopmentConfig()
		cfg.DisableStacktrace = true
	case "json":
		cfg = zap.NewProductionConfig()
	default:
		return nil, fmt.Errorf("--log-format: %q is not console or json", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.OutputPaths = []string{"stderr"}
	return cfg.Build()
}
