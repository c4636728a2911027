// Copyright (c) 2026 nodewright.bridge contributors
// Apache License 2.0 (see LICENSE)

// Command k8s is a multi-call binary for the test control plane: it runs
// kube-apiserver, kube-controller-manager, kube-scheduler or etcd, chosen by
// its first argument (or, busybox-style, by the name it is invoked as).
// One link step instead of four keeps the cold build short, and etcd comes
// out at exactly the version k8s.io/kubernetes pins. Every component still
// runs in its own process, so global state (flags, feature gates, metrics
// registries) is never shared.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	_ "time/tzdata" // CronJob time zones, as in the upstream mains

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
}

func usage() {
	names := []string{"etcd"}
	for n := range components {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: %s <component> [flags...]\ncomponents: %v\n", filepath.Base(os.Args[0]), names)
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args
	if _, ok := components[name]; !ok && name != "etcd" {
		if len(os.Args) < 2 {
			usage()
			os.Exit(2)
		}
		// Shift so the component sees its own name as argv[0], the way its
		// upstream main would.
		name = os.Args[1]
		args = os.Args[1:]
	}
	if name == "etcd" {
		// etcdmain.Main parses args[1:] itself; this is what etcd's own
		// server/main.go does.
		etcdmain.Main(args)
		return
	}
	newCmd, ok := components[name]
	if !ok {
		usage()
		os.Exit(2)
	}
	os.Args = args
	cmd := newCmd()
	cmd.SetArgs(args[1:])
	os.Exit(cli.Run(cmd))
}
