// CoreDNS with the plugins the real test node's Corefile uses (src/envtest/real-node/coredns.ts): bind (only the
// bridge address), kubernetes for cluster.local, errors for diagnostics, health and ready for start-up checks, cache
// and loadbalance as in the kubeadm default. No forward plugin: the pod network has no route out, so names outside
// the cluster fail instead of leaving the machine.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
