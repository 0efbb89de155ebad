/*
Copyright 2026 The cluster-api-provider-openshift-assisted Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	httpspdy "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	pfconstants "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/transport/websocket"
)

// What cluster-etcd-operator (CEO) runs and issues in an OpenShift cluster.
const (
	// EtcdNamespace holds the etcd static pods etcd-<node> (hostNetwork, etcd listens on
	// 0.0.0.0:2379) and the client certificate below.
	EtcdNamespace = "openshift-etcd"
	// etcdClientSecret is the "client certificate for apiserver, cluster-etcd-operator and
	// etcdctl" (CEO pkg/tlshelpers), a kubernetes.io/tls Secret.
	etcdClientSecret = "etcd-client"
	// etcdCABundleConfigMap holds, under etcdCABundleKey, the CA bundle the etcd serving
	// certificates chain to (CEO pkg/etcdcli uses the same pair).
	etcdCABundleConfigMap = "etcd-ca-bundle"
	etcdCABundleKey       = "ca-bundle.crt"
	// etcdClientPort is the member's client port on its node.
	etcdClientPort = 2379
	// etcdServerName is verified against the serving certificate: CEO puts localhost, 127.0.0.1
	// and ::1 in the SANs of every member's serving certificate, so one name fits every member
	// whatever the node's IP (which the port-forward hides anyway).
	etcdServerName = "localhost"
)

// DefaultDialTimeout bounds opening the port-forward and the etcd client's dial, as KCP's
// proxy.Dialer defaultTimeout does (sigs.k8s.io/cluster-api controlplane/kubeadm/internal/proxy/dial.go).
const DefaultDialTimeout = 10 * time.Second

// PortForwarder is the production Connector. It reaches the etcd member of a control-plane node
// as Cluster API's KubeadmControlPlane does for kubeadm clusters (sigs.k8s.io/cluster-api
// v1.13.4 controlplane/kubeadm/internal: etcd_client_generator.go, etcd/etcd.go, proxy/): a
// port-forward through the workload cluster's API server (the pods/portforward subresource) to
// port 2379 of the pod openshift-etcd/etcd-<node>, plugged into the etcd client as its gRPC
// dialer. Unlike KCP, which makes its own client certificate from the etcd CA it keeps in the
// management cluster and skips server verification, it reads from the workload cluster the
// client certificate CEO issues for etcdctl (Secret openshift-etcd/etcd-client) and verifies the
// member's serving certificate against CEO's CA bundle (ConfigMap openshift-etcd/etcd-ca-bundle).
//
// The zero value is usable.
type PortForwarder struct {
	// DialTimeout bounds opening one port-forward, the etcd client's dial and the reads of the
	// pod, Secret and ConfigMap (default DefaultDialTimeout).
	DialTimeout time.Duration
	// Logger is the etcd client's logger (default: none; KCP passes its --etcd-logger).
	Logger *zap.Logger
}

var _ Connector = &PortForwarder{}

// NewPortForwarder returns a PortForwarder with the default dial timeout.
func NewPortForwarder() *PortForwarder {
	return &PortForwarder{DialTimeout: DefaultDialTimeout}
}

func (p *PortForwarder) dialTimeout() time.Duration {
	if p == nil || p.DialTimeout <= 0 {
		return DefaultDialTimeout
	}
	return p.DialTimeout
}

// etcdPodName is the name of the etcd static pod of node (KCP's staticPodName("etcd", node)).
func etcdPodName(node string) string {
	return "etcd-" + node
}

// Connect returns a client of the member on node: one endpoint, no endpoint auto-sync, the
// connection a port-forward to openshift-etcd/etcd-<node>:2379. It fails early when that pod does
// not exist or is not Running, or when the TLS material cannot be read. The dial itself is lazy
// (as in KCP): an unreachable member shows in the first call. The caller closes the client.
func (p *PortForwarder) Connect(ctx context.Context, workload *rest.Config, node string) (*clientv3.Client, error) {
	if workload == nil {
		return nil, errors.New("no REST config of the workload cluster")
	}
	if node == "" {
		return nil, errors.New("no node name")
	}
	timeout := p.dialTimeout()

	// Bound the reads below; the port-forward keeps its own copy without this timeout (KCP sets
	// it on the config it shares with its callers, which we do not change).
	readCfg := rest.CopyConfig(workload)
	readCfg.Timeout = timeout
	cs, err := kubernetes.NewForConfig(readCfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client of the workload cluster: %w", err)
	}
	pod := etcdPodName(node)
	if err := checkEtcdPod(ctx, cs, pod); err != nil {
		return nil, err
	}
	tlsConfig, err := readTLSConfig(ctx, cs)
	if err != nil {
		return nil, err
	}
	dialer, err := newPodDialer(workload, cs, EtcdNamespace, pod, etcdClientPort, timeout)
	if err != nil {
		return nil, err
	}
	logger := zap.NewNop()
	if p != nil && p.Logger != nil {
		logger = p.Logger
	}
	cli, err := clientv3.New(clientv3.Config{
		// As KCP's etcd.go notes, the endpoint is used only as the host the certificate is
		// verified for: the connection is the dialer's, whatever address gRPC passes it. It must
		// be "localhost" (etcdServerName): gRPC verifies the name of the address it dials and
		// overrides tls.Config.ServerName with it.
		Endpoints:   []string{"https://" + net.JoinHostPort(etcdServerName, strconv.Itoa(etcdClientPort))},
		DialTimeout: timeout,
		// AutoSyncInterval stays 0: the client must keep talking to this member only.
		DialOptions: []grpc.DialOption{
			grpc.WithContextDialer(dialer.DialContext),
		},
		// KCP's etcd.go sets no gRPC keepalive either: the clients are short-lived and every call
		// is bounded by the caller's timeout.
		TLS:    tlsConfig,
		Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the etcd client of %s/%s: %w", EtcdNamespace, pod, err)
	}
	return cli, nil
}

// checkEtcdPod returns an error unless the pod exists and is Running: a port-forward to any other
// pod fails with a less telling error, or hangs.
func checkEtcdPod(ctx context.Context, c kubernetes.Interface, pod string) error {
	p, err := c.CoreV1().Pods(EtcdNamespace).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("etcd pod %s/%s not found in the workload cluster: %w", EtcdNamespace, pod, err)
	}
	if err != nil {
		return fmt.Errorf("reading Pod %s/%s of the workload cluster: %w", EtcdNamespace, pod, err)
	}
	if p.Status.Phase != corev1.PodRunning {
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = "unknown"
		}
		return fmt.Errorf("etcd pod %s/%s is not running (phase %s)", EtcdNamespace, pod, phase)
	}
	return nil
}

// readTLSConfig reads the client certificate CEO issues for etcdctl and the etcd CA bundle from
// the workload cluster. Errors name the object and key, never their content.
func readTLSConfig(ctx context.Context, c kubernetes.Interface) (*tls.Config, error) {
	secretRef := EtcdNamespace + "/" + etcdClientSecret
	secret, err := c.CoreV1().Secrets(EtcdNamespace).Get(ctx, etcdClientSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s of the workload cluster: %w", secretRef, err)
	}
	crt := secret.Data[corev1.TLSCertKey]
	if len(crt) == 0 {
		return nil, fmt.Errorf("secret %s of the workload cluster has no %s", secretRef, corev1.TLSCertKey)
	}
	key := secret.Data[corev1.TLSPrivateKeyKey]
	if len(key) == 0 {
		return nil, fmt.Errorf("secret %s of the workload cluster has no %s", secretRef, corev1.TLSPrivateKeyKey)
	}
	// tls.X509KeyPair's errors describe the problem, not the bytes.
	cert, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, fmt.Errorf("secret %s of the workload cluster holds no valid %s/%s pair: %w",
			secretRef, corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)
	}

	cmRef := EtcdNamespace + "/" + etcdCABundleConfigMap
	cm, err := c.CoreV1().ConfigMaps(EtcdNamespace).Get(ctx, etcdCABundleConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s of the workload cluster: %w", cmRef, err)
	}
	bundle, ok := cm.Data[etcdCABundleKey]
	if !ok || strings.TrimSpace(bundle) == "" {
		return nil, fmt.Errorf("ConfigMap %s of the workload cluster has no %s", cmRef, etcdCABundleKey)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(bundle)) {
		return nil, fmt.Errorf("%s of ConfigMap %s of the workload cluster holds no PEM certificate", etcdCABundleKey, cmRef)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   etcdServerName,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// dialerFunc is an httpstream.Dialer of a function.
type dialerFunc func(protocols ...string) (httpstream.Connection, string, error)

// Dial calls f.
func (f dialerFunc) Dial(protocols ...string) (httpstream.Connection, string, error) {
	return f(protocols...)
}

// dialTunnel opens the SPDY-over-websocket tunnel, as client-go's
// portforward.NewSPDYOverWebsocketDialer does, but bound to ctx. client-go's builds its upgrade
// request without a context, and its websocket dialer has no handshake timeout: a dial to an API
// server that accepted the connection and never answered never returned, and each timed-out
// port-forward left its goroutines (and connection) behind. With the request's context, the
// websocket handshake ends at ctx's deadline (gorilla/websocket's DialContext sets it on the
// connection); the SPDY fallback is bounded by its http.Client's Timeout. It offers each
// protocol under the tunneling prefix, and returns the SPDY connection the websocket carries,
// with the protocol the server chose.
func dialTunnel(ctx context.Context, u *url.URL, transport http.RoundTripper, holder websocket.ConnectionHolder,
	protocols ...string) (httpstream.Connection, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil) // websockets upgrade a GET (RFC 6455 4.1)
	if err != nil {
		return nil, "", err
	}
	offered := make([]string, 0, len(protocols))
	for _, p := range protocols {
		offered = append(offered, pfconstants.WebsocketsSPDYTunnelingPrefix+p)
	}
	ws, err := websocket.Negotiate(transport, holder, req, offered...)
	if err != nil {
		return nil, "", err
	}
	if ws == nil {
		return nil, "", errors.New("the websocket negotiation returned no connection")
	}
	conn, err := httpspdy.NewClientConnectionWithPings(portforward.NewTunnelingConnection("client", ws), portforward.PingPeriod)
	return conn, strings.TrimPrefix(ws.Subprotocol(), pfconstants.WebsocketsSPDYTunnelingPrefix), err
}

// podDialer opens connections to one port of one pod through the API server's port-forward, as
// KCP's proxy.Dialer does (controlplane/kubeadm/internal/proxy/dial.go): one connection per dial,
// each carrying one error stream and one data stream.
type podDialer struct {
	config    *rest.Config
	url       *url.URL
	namespace string
	pod       string
	port      int
	timeout   time.Duration
	transport http.RoundTripper
	upgrader  spdy.Upgrader
}

func newPodDialer(cfg *rest.Config, c kubernetes.Interface, namespace, pod string, port int, timeout time.Duration) (*podDialer, error) {
	if port <= 0 {
		return nil, errors.New("port required")
	}
	cfg = rest.CopyConfig(cfg)
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the SPDY round tripper for the workload cluster: %w", err)
	}
	u := c.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	return &podDialer{
		config: cfg, url: u, namespace: namespace, pod: pod, port: port, timeout: timeout,
		transport: transport, upgrader: upgrader,
	}, nil
}

// DialContext opens a port-forward and returns its data stream as a net.Conn (gRPC's context
// dialer; addr is ignored: the dialer is bound to its pod).
func (d *podDialer) DialContext(ctx context.Context, _ string) (net.Conn, error) {
	target := fmt.Sprintf("pod %s/%s port %d", d.namespace, d.pod, d.port)
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("port-forward to %s: context done before dialing: %w", target, err)
	}

	httpClient := &http.Client{Transport: d.transport}
	if deadline, ok := ctx.Deadline(); ok {
		httpClient.Timeout = time.Until(deadline)
	}
	spdyDialer := spdy.NewDialer(d.upgrader, httpClient, http.MethodPost, d.url)
	// As KCP: try the SPDY-over-websocket tunnel first (the API server's default since
	// Kubernetes 1.31), fall back to SPDY when the server does not upgrade to it.
	wsTransport, holder, err := websocket.RoundTripperFor(d.config)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s: creating the websocket dialer: %w", target, err)
	}
	wsDialer := dialerFunc(func(protocols ...string) (httpstream.Connection, string, error) {
		return dialTunnel(ctx, d.url, wsTransport, holder, protocols...)
	})
	dialer := portforward.NewFallbackDialer(wsDialer, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})

	// Dial takes no context: run it aside so that the context bounds it, and close a connection
	// that arrives too late.
	type result struct {
		conn httpstream.Connection
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
		done <- result{conn, err}
	}()
	var connection httpstream.Connection
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("port-forward to %s: upgrading the connection: %w", target, r.err)
		}
		connection = r.conn
	case <-ctx.Done():
		go func() {
			if r := <-done; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("port-forward to %s: %w", target, context.Cause(ctx))
	}

	// From here every early return closes connection, else it leaks. The connection carries one
	// stream pair, so its request ID is 0 (as in KCP).
	headers := http.Header{}
	headers.Set(corev1.PortHeader, strconv.Itoa(d.port))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")

	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	errorStream, err := connection.CreateStream(headers)
	if err != nil {
		_ = connection.Close()
		return nil, fmt.Errorf("port-forward to %s: creating the error stream: %w", target, err)
	}
	// We write nothing on the error stream; the kubelet writes there why it could not forward
	// (kubectl's portforward.go reads it the same way).
	if err := errorStream.Close(); err != nil {
		_ = connection.Close()
		return nil, fmt.Errorf("port-forward to %s: closing the error stream: %w", target, err)
	}

	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	dataStream, err := connection.CreateStream(headers)
	if err != nil {
		_ = connection.Close()
		return nil, fmt.Errorf("port-forward to %s: creating the data stream: %w", target, err)
	}

	c := &conn{connection: connection, stream: dataStream, target: target,
		name: fmt.Sprintf("%s/%s:%d", d.namespace, d.pod, d.port), errDone: make(chan struct{})}
	go c.watchErrorStream(errorStream)
	return c, nil
}

// conn is the data stream of one port-forward as a net.Conn, as KCP's proxy.Conn
// (controlplane/kubeadm/internal/proxy/conn.go); it also keeps what the kubelet reports on the
// error stream and returns it instead of a bare EOF.
type conn struct {
	connection httpstream.Connection
	stream     httpstream.Stream
	target     string
	name       string

	// errDone is closed once the error stream is read to its end.
	errDone   chan struct{}
	mu        sync.Mutex
	remoteErr error
}

// errorStreamGrace is how long a Read that hit the end of the data stream waits for the error
// stream's message: the kubelet ends both streams together, but they are read apart.
const errorStreamGrace = 500 * time.Millisecond

func (c *conn) watchErrorStream(s httpstream.Stream) {
	msg, err := io.ReadAll(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(c.errDone)
	switch {
	case len(msg) > 0:
		c.remoteErr = fmt.Errorf("port-forward to %s: %s", c.target, strings.TrimSpace(string(msg)))
	case err != nil && !errors.Is(err, io.EOF):
		c.remoteErr = fmt.Errorf("port-forward to %s: reading the error stream: %w", c.target, err)
	}
}

func (c *conn) remoteError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remoteErr
}

// Read reads from the data stream.
func (c *conn) Read(b []byte) (int, error) {
	n, err := c.stream.Read(b)
	if err != nil {
		if errors.Is(err, io.EOF) {
			select {
			case <-c.errDone:
			case <-time.After(errorStreamGrace):
			}
		}
		if rerr := c.remoteError(); rerr != nil {
			return n, rerr
		}
	}
	return n, err
}

// Write writes to the data stream.
func (c *conn) Write(b []byte) (int, error) {
	n, err := c.stream.Write(b)
	if err != nil {
		if rerr := c.remoteError(); rerr != nil {
			return n, rerr
		}
	}
	return n, err
}

// Close closes the data stream and the port-forward.
func (c *conn) Close() error {
	return errors.Join(c.stream.Close(), c.connection.Close())
}

// LocalAddr and RemoteAddr name the port-forward (KCP's proxy.Addr).
func (c *conn) LocalAddr() net.Addr  { return addr{c} }
func (c *conn) RemoteAddr() net.Addr { return addr{c} }

// SetDeadline and the two below accept and ignore deadlines, as KCP's proxy.Conn does: the
// streams have none; gRPC bounds its calls with contexts and closes the conn.
func (c *conn) SetDeadline(time.Time) error      { return nil }
func (c *conn) SetReadDeadline(time.Time) error  { return nil }
func (c *conn) SetWriteDeadline(time.Time) error { return nil }

type addr struct{ c *conn }

func (a addr) Network() string { return portforward.PortForwardProtocolV1Name }
func (a addr) String() string {
	return fmt.Sprintf("portforward://%s#%d", a.c.name, a.c.stream.Identifier())
}
