package main

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/crawler-dev/crawler/internal/proctmp"
)

// app is what every subcommand shares: the global flags and the logger
// built from them once the command line is parsed.
type app struct {
	configFile string
	logLevel   string
	logFormat  string
	logger     *zap.Logger
	render     renderFlags // the process's browser, for kinds that say render
	// tmp is the process's temporary directory (temp.go), nil until a
	// command that may start a browser or a redis-server makes it.
	tmp *proctmp.Dir
	// profile is --cpu-profile's (cpuprofile.go).
	profile cpuProfile
}

// Execute runs the root command and exits non-zero on error.
func Execute() {
	a := &app{logger: zap.NewNop()}
	err := newRootCmdOf(a).Execute()
	a.profile.stop()
	a.closeTemp()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crawler:", err)
		os.Exit(1)
	}
}

// newRootCmdOf is the root command of the app a.
func newRootCmdOf(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "crawler",
		Short: "A distributed web crawler: master, slaves and client, coordinated through Redis",
		Long: `crawler runs a master/slave crawling cluster coordinated through Redis.
Every flag can also be set as CRAWLER_<FLAG> in the environment (CRAWLER_REDIS,
CRAWLER_LOG_LEVEL, ...) or as a key in the YAML file given with --config.
Precedence: flag > environment > config file > default.`,
		Example: `  crawler demo                                       # crawl a built-in demo site: no servers needed
  crawler run --job news.yaml -o news.jsonl          # one job on this machine, embedded Redis
  crawler master --redis redis://10.0.0.1:6379/0 --mongo mongodb://10.0.0.1:27017/crawler
  crawler slave --id 0 --redis redis://10.0.0.1:6379/0 --mongo mongodb://10.0.0.1:27017/crawler
  crawler client submit --redis redis://10.0.0.1:6379/0 --job news.yaml
  crawler --version`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
		PersistentPostRun: func(*cobra.Command, []string) { _ = a.logger.Sync() },
	}
	root.SetVersionTemplate("crawler {{.Version}}\n")
	root.SetFlagErrorFunc(suggestFlag) // the subcommands inherit it
	pf := root.PersistentFlags()
	pf.StringVar(&a.configFile, "config", "", "YAML config file whose keys are flag names")
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&a.logFormat, "log-format", "console", "log format: console or json")
	pf.StringVar(&a.profile.path, "cpu-profile", "", "write a CPU profile of the whole process to this file (for crawler-bench site --stages)")
	_ = pf.MarkHidden("cpu-profile")

	root.AddCommand(
		newMasterCmd(a),
		newSlaveCmd(a),
		newClientCmd(a),
		newCheckCmd(a),
		newProxyCmd(a),
		newRunCmd(a),
		newDemoCmd(a),
		newVersionCmd(),
	)
	return root
}

// setup resolves the command's flags from the environment and the config
// file, then builds the logger.
func (a *app) setup(cmd *cobra.Command) error {
	if err := resolveFlags(cmd.Flags(), a.configFile, knownFlags(cmd.Root())); err != nil {
		return err
	}
	logger, err := newLogger(a.logLevel, a.logFormat)
	if err != nil {
		return err
	}
	a.useLogger(logger)
	a.openTemp(cmd)
	return a.profile.start()
}

// useLogger makes logger the process's, go-redis's messages included.
func (a *app) useLogger(logger *zap.Logger) {
	a.logger = logger
	redis.SetLogger(redisLogger{log: logger.Named("redis")})
}

func newLogger(level, format string) (*zap.Logger, error) {
	return newLoggerTo(level, format, zapcore.Lock(os.Stderr))
}

// newLoggerTo builds the logger the flags ask for, writing to out.
func newLoggerTo(level, format string, out zapcore.WriteSyncer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	var enc zapcore.Encoder
	switch format {
	case "console":
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		enc = zapcore.NewConsoleEncoder(ec)
	case "json":
		enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	default:
		return nil, fmt.Errorf("--log-format: %q is not console or json", format)
	}
	return zap.New(zapcore.NewCore(enc, out, lvl), zap.AddCaller(), zap.ErrorOutput(zapcore.Lock(os.Stderr))), nil
}

// redisLogger sends go-redis's own messages (reconnects, pool trouble)
// through the process's logger instead of the standard library's.
type redisLogger struct{ log *zap.Logger }

// Printf logs one go-redis message as a warning, except while openRedis
// pings: then a failure is reported once, as the command's error.
func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	if redisPinging.Load() > 0 {
		return
	}
	l.log.Warn(fmt.Sprintf(format, v...))
}
