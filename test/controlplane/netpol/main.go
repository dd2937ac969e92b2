// NetworkPolicy enforcement for the real test node (src/envtest/real-node/netpol.ts): the dataplane of
// sigs.k8s.io/kube-network-policies (nftables + nfqueue on the machine's network namespace, the first packet of each
// connection to or from a pod judged against the NetworkPolicies), driven from the harness's kubeconfig instead of a
// ServiceAccount, so it runs as a node agent beside kubelet and kube-proxy. Traffic from root on the machine (kubelet
// probes, the tests' own clients) is not judged, as upstream. `-cleanup` removes its nftables table: the teardown
// runs it when the agent died without removing the table itself. On a kernel without nftables' `queue` expression
// (these machines') the table cannot be written and the harness queues packets with an iptables NFQUEUE rule
// instead (src/envtest/real-node/netpol.ts); the judging below is the same either way.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// TableName keeps the harness's nftables table apart from anything else on the machine.
const TableName = "sampledb-envtest-netpol"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig to watch NetworkPolicies, Namespaces and Pods with")
	nodeName := flag.String("node-name", "", "the node whose pods are judged")
	queueID := flag.Int("nfqueue-id", 100, "the nfqueue number")
	cleanup := flag.Bool("cleanup", false, "remove the nftables table and exit")
	klog.InitFlags(nil)
	flag.Parse()

	if *cleanup {
		if err := deleteTable(); err != nil {
			fmt.Fprintf(os.Stderr, "netpol: removing table %s: %v\n", TableName, err)
			os.Exit(1)
		}
		return
	}
	if *kubeconfig == "" || *nodeName == "" {
		fmt.Fprintln(os.Stderr, "netpol: -kubeconfig and -node-name are required")
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatalf("reading %s: %v", *kubeconfig, err)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Fatalf("client: %v", err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), unix.SIGINT, unix.SIGTERM)
	defer cancel()

	factory := informers.NewSharedInformerFactory(clientset, 0)
	controller, err := networkpolicy.NewController(
		clientset,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			// Fail closed, as a real enforcing CNI: a packet the agent cannot judge is dropped.
			FailOpen:            false,
			QueueID:             *queueID,
			NodeName:            *nodeName,
			NetfilterBug1766Fix: true,
			NFTableName:         TableName,
			// Pod IPs come from the apiserver: the harness's containerd (1.6) has no NRI socket, so the plugin's
			// connection fails once and only the informer answers. It is still created: with NRIdisabled, upstream
			// v0.8.0 dereferences the absent plugin for any address that is no pod's and the agent panics.
			NRIdisabled: false,
		},
	)
	if err != nil {
		klog.Fatalf("controller: %v", err)
	}
	factory.Start(ctx.Done())
	// Run returns when ctx is done, after removing its table.
	if err := controller.Run(ctx); err != nil {
		klog.Errorf("controller: %v", err)
		_ = deleteTable()
		os.Exit(1)
	}
}

func deleteTable() error {
	nft, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Name: TableName, Family: nftables.TableFamilyINet}
	// Add then delete: deleting a table that is not there is then no error.
	nft.AddTable(table)
	nft.DelTable(table)
	return nft.Flush()
}
