// Copyright (c) 2026 nodewright.bridge contributors
// Apache License 2.0 (see LICENSE)

// The pause process of the real test nodes' pod sandboxes (containerd's sandbox_image), built by
// tests/cluster/images.py into an image of this binary alone: it holds the pod's namespaces,
// reaps the children that end up with it (PID 1 of a shared pid namespace), and exits 0 on
// SIGTERM or SIGINT. Written for the tests: no registry image can be pulled here.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("nodewright-pause")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: %v, exiting\n", sig)
		os.Exit(0)
	}
}
