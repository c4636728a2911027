// Copyright (c) 2026 nodewright.bridge contributors
// Apache License 2.0 (see LICENSE)

// Command kubelet is the kubelet of k8s.io/kubernetes at the control plane's version, for the test
// cluster's real nodes (tests/cluster/real_node.py). A binary of its own rather than a component of
// the multi-call control plane: only the real-node tests need it, so the control plane's cold
// build does not pay for it, and it is built in the background (build.sh kubelet).
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/restclient" // client metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
