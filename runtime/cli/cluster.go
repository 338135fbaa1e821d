package cli

import (
	"errors"
	"flag"
	"strings"

	"github.com/toolnode/toolnode/runtime/cluster"
)

// clusterFlags are serve's flags for joining a NATS cluster.
type clusterFlags struct {
	url, name, node        string
	creds                  string
	tlsCA, tlsCert, tlsKey string

	cfg *cluster.Config // what check made of them: nil for no cluster
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "cluster", "", "join the NATS cluster at `URL` (nats://HOST:PORT, several comma-separated): list and call the bundles of every node, and serve this node's to the others (see docs/cluster.md)")
	fs.StringVar(&c.name, "cluster-name", cluster.DefaultName, "the cluster's `NAME`: nodes of one name on one NATS server see each other")
	fs.StringVar(&c.node, "cluster-node", "", "this node's `ID` in the cluster, shown by status and in errors (default host name, process id and a random suffix)")
	fs.StringVar(&c.creds, "cluster-creds", "", "NATS credentials `FILE` (user JWT and NKey seed) for --cluster")
	fs.StringVar(&c.tlsCA, "cluster-tls-ca", "", "PEM `FILE` of the CAs that sign the NATS server's certificate")
	fs.StringVar(&c.tlsCert, "cluster-tls-cert", "", "PEM `FILE` of this node's client certificate for the NATS server (with --cluster-tls-key)")
	fs.StringVar(&c.tlsKey, "cluster-tls-key", "", "PEM `FILE` of the key of --cluster-tls-cert")
}

// check checks the flags and sets cfg to the cluster to join.
func (c *clusterFlags) check() error {
	if c.url == "" {
		if c.creds != "" || c.tlsCA != "" || c.tlsCert != "" || c.tlsKey != "" || c.node != "" {
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
	c.cfg = &cluster.Config{URL: c.url, Name: c.name, NodeID: c.node, Creds: c.creds, TLSCA: c.tlsCA, TLSCert: c.tlsCert, TLSKey: c.tlsKey}
	return nil
}
