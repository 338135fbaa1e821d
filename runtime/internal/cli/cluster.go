package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/toolnode/toolnode/runtime/internal/cluster"
)

// clusterFlags are serve's flags for joining a NATS cluster.
type clusterFlags struct {
	url, name, node        string
	creds, key             string
	tlsCA, tlsCert, tlsKey string

	cfg *cluster.Config // what check made of them: nil for no cluster
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "cluster", "", "join the NATS cluster at `URL` (nats://HOST:PORT, several comma-separated): list and call the bundles of every node, and serve this node's to the others (see docs/cluster.md)")
	fs.StringVar(&c.name, "cluster-name", cluster.DefaultName, "the cluster's `NAME`: nodes of one name on one NATS server see each other")
	fs.StringVar(&c.node, "cluster-node", "", "this node's `ID` in the cluster, shown by status and in errors (default host name, process id and a random suffix)")
	fs.StringVar(&c.creds, "cluster-creds", "", "NATS credentials `FILE` (user JWT and NKey seed) for --cluster")
	fs.StringVar(&c.key, "cluster-key", "", "sign every message to the cluster with the key in `FILE`, shared by its nodes, and drop any not signed with it (make one: head -c 32 /dev/urandom | base64 > FILE)")
	fs.StringVar(&c.tlsCA, "cluster-tls-ca", "", "PEM `FILE` of the CAs that sign the NATS server's certificate")
	fs.StringVar(&c.tlsCert, "cluster-tls-cert", "", "PEM `FILE` of this node's client certificate for the NATS server (with --cluster-tls-key)")
	fs.StringVar(&c.tlsKey, "cluster-tls-key", "", "PEM `FILE` of the key of --cluster-tls-cert")
}

// check checks the flags and sets cfg to the cluster to join.
func (c *clusterFlags) check() error {
	if c.url == "" {
		if c.creds != "" || c.key != "" || c.tlsCA != "" || c.tlsCert != "" || c.tlsKey != "" || c.node != "" {
			return errors.New("--cluster-* flags go with --cluster URL")
		}
		return nil
	}
	if !strings.Contains(c.url, "://") {
		return errors.New("--cluster " + c.url + ": want nats://HOST:PORT")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("--cluster-tls-cert and --cluster-tls-key go together")
	}
	if c.key != "" {
		if _, err := cluster.ReadKey(c.key, nil); err != nil {
			return fmt.Errorf("--cluster-key: %w", err)
		}
	}
	c.cfg = &cluster.Config{URL: c.url, Name: c.name, NodeID: c.node, Creds: c.creds, KeyFile: c.key, TLSCA: c.tlsCA, TLSCert: c.tlsCert, TLSKey: c.tlsKey}
	return nil
}

// printCluster writes the cluster part of a toolnode.status result, when the node is in one:
// a line per node with what it serves and the round trip to it.
func printCluster(w io.Writer, res json.RawMessage) {
	var st struct {
		StructuredContent struct {
			Cluster *cluster.Status `json:"cluster"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(res, &st) != nil || st.StructuredContent.Cluster == nil {
		return
	}
	c := st.StructuredContent.Cluster
	fmt.Fprintf(w, "\nCLUSTER %s via %s (%s), this node %s\n", c.Name, c.URL, c.Connection, c.Node)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tBUNDLES\tTOOLS\tROUND TRIP")
	for _, n := range c.Nodes {
		var names []string
		tools := 0
		for _, b := range n.Bundles {
			names = append(names, b.Name)
			tools += b.Tools
		}
		rtt := fmt.Sprintf("%.2fms", n.LatencyMs)
		switch {
		case n.Self:
			rtt = "(this node)"
		case n.Error != "":
			rtt = "no answer: " + n.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", n.ID, cmp.Or(strings.Join(names, ","), "-"), tools, rtt)
	}
	tw.Flush()
}
