// Command sfnlocal serves a local AWS Step Functions endpoint (package
// github.com/myriarch/myriarch/local/sfnlocal) for the SDK and the AWS CLI:
//
//	sfnlocal -addr 127.0.0.1:8083
//	aws stepfunctions --endpoint-url http://127.0.0.1:8083 list-state-machines
//
// Standalone it has no Lambda handlers (tasks fail with Lambda.ResourceNotFoundException);
// the local stack embeds the package and registers its Lambdas in-process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sfnlocal:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sfnlocal", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8083", "address to listen on")
	region := fs.String("region", "us-east-1", "region in ARNs")
	account := fs.String("account", "123456789012", "account id in ARNs")
	debug := fs.Bool("debug", false, "log every API error and history event")
	if err := fs.Parse(args); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	srv := sfnlocal.New(sfnlocal.Options{Region: *region, AccountID: *account, Logger: logger})
	defer srv.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sfnlocal listening on http://%s\n", ln.Addr())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
