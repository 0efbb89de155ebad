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
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	spdystream "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
)

// issue makes a certificate signed by ca (self-signed when ca is nil).
func issue(t *testing.T, ca *pki.KeyPair, cn string, isCA bool, usage []x509.ExtKeyUsage, dns []string, ips []net.IP) *pki.KeyPair {
	t.Helper()
	return pki.MustIssue(t, ca, pki.Request{CommonName: cn, CA: isCA, Usages: usage, DNSNames: dns, IPs: ips})
}

// etcdPKI is what cluster-etcd-operator issues, in small: a CA, a serving certificate with the
// localhost SANs and the etcdctl client certificate.
type etcdPKI struct {
	ca, serving, client *pki.KeyPair
}

func newPKI(t *testing.T) *etcdPKI {
	t.Helper()
	ca := issue(t, nil, "etcd-signer", true, nil, nil, nil)
	return &etcdPKI{
		ca: ca,
		serving: issue(t, ca, "system:etcd-server:etcd-client", false,
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			[]string{"localhost", "etcd.kube-system.svc"}, []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}),
		client: issue(t, ca, "etcd-client", false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil),
	}
}

func (p *etcdPKI) secret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: EtcdNamespace, Name: etcdClientSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: p.client.CertPEM, corev1.TLSPrivateKeyKey: p.client.KeyPEM},
	}
}

func (p *etcdPKI) configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: EtcdNamespace, Name: etcdCABundleConfigMap},
		Data:       map[string]string{etcdCABundleKey: string(p.ca.CertPEM)},
	}
}

func etcdPod(node string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: EtcdNamespace, Name: etcdPodName(node)},
		Spec:       corev1.PodSpec{HostNetwork: true},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func TestReadTLSConfig(t *testing.T) {
	p := newPKI(t)
	other := newPKI(t)
	tests := []struct {
		name    string
		secret  func(*corev1.Secret) *corev1.Secret
		cm      func(*corev1.ConfigMap) *corev1.ConfigMap
		wantErr string
	}{
		{name: "good"},
		{
			name:    "missing Secret",
			secret:  func(*corev1.Secret) *corev1.Secret { return nil },
			wantErr: `reading Secret openshift-etcd/etcd-client of the workload cluster: secrets "etcd-client" not found`,
		},
		{
			name:    "Secret without tls.key",
			secret:  func(s *corev1.Secret) *corev1.Secret { delete(s.Data, corev1.TLSPrivateKeyKey); return s },
			wantErr: "secret openshift-etcd/etcd-client of the workload cluster has no tls.key",
		},
		{
			name:    "Secret without tls.crt",
			secret:  func(s *corev1.Secret) *corev1.Secret { s.Data[corev1.TLSCertKey] = nil; return s },
			wantErr: "secret openshift-etcd/etcd-client of the workload cluster has no tls.crt",
		},
		{
			name:    "bad PEM certificate",
			secret:  func(s *corev1.Secret) *corev1.Secret { s.Data[corev1.TLSCertKey] = []byte("not PEM"); return s },
			wantErr: "secret openshift-etcd/etcd-client of the workload cluster holds no valid tls.crt/tls.key pair: tls: failed to find any PEM data in certificate input",
		},
		{
			name: "key of another certificate",
			secret: func(s *corev1.Secret) *corev1.Secret {
				s.Data[corev1.TLSPrivateKeyKey] = other.client.KeyPEM
				return s
			},
			wantErr: "holds no valid tls.crt/tls.key pair: tls: private key does not match public key",
		},
		{
			name:    "missing ConfigMap",
			cm:      func(*corev1.ConfigMap) *corev1.ConfigMap { return nil },
			wantErr: `reading ConfigMap openshift-etcd/etcd-ca-bundle of the workload cluster: configmaps "etcd-ca-bundle" not found`,
		},
		{
			name:    "ConfigMap without ca-bundle.crt",
			cm:      func(c *corev1.ConfigMap) *corev1.ConfigMap { c.Data = map[string]string{"other": "x"}; return c },
			wantErr: "ConfigMap openshift-etcd/etcd-ca-bundle of the workload cluster has no ca-bundle.crt",
		},
		{
			name:    "bad PEM CA bundle",
			cm:      func(c *corev1.ConfigMap) *corev1.ConfigMap { c.Data[etcdCABundleKey] = "garbage"; return c },
			wantErr: "ca-bundle.crt of ConfigMap openshift-etcd/etcd-ca-bundle of the workload cluster holds no PEM certificate",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			s, c := p.secret(), p.configMap()
			if tt.secret != nil {
				s = tt.secret(s)
			}
			if tt.cm != nil {
				c = tt.cm(c)
			}
			if s != nil {
				objs = append(objs, s)
			}
			if c != nil {
				objs = append(objs, c)
			}
			cfg, err := readTLSConfig(context.Background(), fake.NewClientset(objs...))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "BEGIN") {
					t.Fatalf("error shows PEM material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ServerName != "localhost" || len(cfg.Certificates) != 1 || cfg.InsecureSkipVerify {
				t.Fatalf("unexpected TLS config: ServerName %q, %d certificates, InsecureSkipVerify %v",
					cfg.ServerName, len(cfg.Certificates), cfg.InsecureSkipVerify)
			}
			// The CA bundle verifies the member's serving certificate for "localhost".
			if _, err := p.serving.Cert.Verify(x509.VerifyOptions{DNSName: cfg.ServerName, Roots: cfg.RootCAs}); err != nil {
				t.Fatalf("the serving certificate does not verify against the bundle: %v", err)
			}
			if _, err := other.serving.Cert.Verify(x509.VerifyOptions{DNSName: cfg.ServerName, Roots: cfg.RootCAs}); err == nil {
				t.Fatal("a certificate of another CA verifies")
			}
		})
	}
}

func TestCheckEtcdPod(t *testing.T) {
	tests := []struct {
		name    string
		pod     *corev1.Pod
		wantErr string
	}{
		{name: "running", pod: etcdPod("n1", corev1.PodRunning)},
		{name: "missing", wantErr: `etcd pod openshift-etcd/etcd-n1 not found in the workload cluster: pods "etcd-n1" not found`},
		{name: "other node's pod only", pod: etcdPod("n2", corev1.PodRunning), wantErr: "etcd pod openshift-etcd/etcd-n1 not found"},
		{name: "pending", pod: etcdPod("n1", corev1.PodPending), wantErr: "etcd pod openshift-etcd/etcd-n1 is not running (phase Pending)"},
		{name: "failed", pod: etcdPod("n1", corev1.PodFailed), wantErr: "is not running (phase Failed)"},
		{name: "no phase", pod: etcdPod("n1", ""), wantErr: "is not running (phase unknown)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			if tt.pod != nil {
				objs = append(objs, tt.pod)
			}
			err := checkEtcdPod(context.Background(), fake.NewClientset(objs...), etcdPodName("n1"))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// forwardFunc plays the kubelet's side of one port-forward: it gets the error and data streams.
type forwardFunc func(errorStream, dataStream httpstream.Stream)

// fakeAPIServer serves the pods, the Secret and the ConfigMap of openshift-etcd, and the
// pods/portforward subresource over SPDY (it refuses the websocket tunnel, so that the client
// falls back to SPDY, as it does against API servers before Kubernetes 1.31).
type fakeAPIServer struct {
	t       *testing.T
	srv     *httptest.Server
	objects map[string]runtime.Object // by URL path
	forward forwardFunc

	mu          sync.Mutex
	wsAttempts  int
	spdyStreams []http.Header
}

func newFakeAPIServer(t *testing.T, forward forwardFunc, objs ...runtime.Object) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{t: t, objects: map[string]runtime.Object{}, forward: forward}
	for _, o := range objs {
		m, err := metaAccessor(o)
		if err != nil {
			t.Fatal(err)
		}
		var resource string
		switch o.(type) {
		case *corev1.Pod:
			resource = "pods"
		case *corev1.Secret:
			resource = "secrets"
		case *corev1.ConfigMap:
			resource = "configmaps"
		default:
			t.Fatalf("unexpected object %T", o)
		}
		f.objects[fmt.Sprintf("/api/v1/namespaces/%s/%s/%s", m.GetNamespace(), resource, m.GetName())] = o
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func metaAccessor(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}

func (f *fakeAPIServer) config() *rest.Config {
	return &rest.Config{Host: f.srv.URL}
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/portforward") {
		if _, ok := f.objects[strings.TrimSuffix(r.URL.Path, "/portforward")]; !ok {
			f.notFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			// The websocket tunnel (GET): refuse it like an API server without it.
			f.mu.Lock()
			f.wsAttempts++
			f.mu.Unlock()
			http.Error(w, "websocket tunneling not served here", http.StatusBadRequest)
			return
		}
		f.portForward(w, r)
		return
	}
	o, ok := f.objects[r.URL.Path]
	if !ok || r.Method != http.MethodGet {
		f.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(o); err != nil {
		f.t.Error(err)
	}
}

func (f *fakeAPIServer) notFound(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimSuffix(r.URL.Path, "/portforward"), "/")
	name, resource := parts[len(parts)-1], parts[len(parts)-2]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	err := json.NewEncoder(w).Encode(&metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Reason:   metav1.StatusReasonNotFound,
		Code:     http.StatusNotFound,
		Message:  fmt.Sprintf("%s %q not found", resource, name),
		Details:  &metav1.StatusDetails{Name: name, Kind: resource},
	})
	if err != nil {
		f.t.Error(err)
	}
}

// portForward does what the kubelet's SPDY port-forward server does: negotiate the protocol,
// upgrade, take one error stream and one data stream of the same request ID, forward.
func (f *fakeAPIServer) portForward(w http.ResponseWriter, r *http.Request) {
	if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardProtocolV1Name}); err != nil {
		return
	}
	streams := make(chan httpstream.Stream, 4)
	conn := spdystream.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer func() { _ = conn.Close() }()
	var errorStream, dataStream httpstream.Stream
	timeout := time.After(10 * time.Second)
	for errorStream == nil || dataStream == nil {
		select {
		case s := <-streams:
			f.mu.Lock()
			f.spdyStreams = append(f.spdyStreams, s.Headers())
			f.mu.Unlock()
			switch s.Headers().Get(corev1.StreamType) {
			case corev1.StreamTypeError:
				errorStream = s
			case corev1.StreamTypeData:
				dataStream = s
			}
		case <-conn.CloseChan():
			return
		case <-timeout:
			f.t.Errorf("the client did not open an error and a data stream")
			return
		}
	}
	if p := dataStream.Headers().Get(corev1.PortHeader); p != "2379" {
		fmt.Fprintf(errorStream, "unexpected port %q", p)
		_ = errorStream.Close()
		_ = dataStream.Close()
		f.t.Errorf("port header = %q, want 2379", p)
		return
	}
	f.forward(errorStream, dataStream)
	<-conn.CloseChan()
}

// proxyTo forwards the data stream to a TCP address, as the kubelet forwards to the pod's port
// (for a hostNetwork pod: the node's).
func proxyTo(addr string) forwardFunc {
	return func(errorStream, dataStream httpstream.Stream) {
		backend, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", addr)
		if err != nil {
			fmt.Fprintf(errorStream, "error forwarding port 2379: %v", err)
			_ = errorStream.Close()
			_ = dataStream.Close()
			return
		}
		_ = errorStream.Close()
		go func() {
			_, _ = io.Copy(backend, dataStream)
			_ = backend.(*net.TCPConn).CloseWrite()
		}()
		_, _ = io.Copy(dataStream, backend)
		_ = backend.Close()
		_ = dataStream.Close()
	}
}

// echoServer is a TCP server that sends back what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

func dialer(t *testing.T, f *fakeAPIServer, pod string) *podDialer {
	t.Helper()
	cs, err := kubernetes.NewForConfig(f.config())
	if err != nil {
		t.Fatal(err)
	}
	d, err := newPodDialer(f.config(), cs, EtcdNamespace, pod, etcdClientPort, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPodDialerForwardsBothWays(t *testing.T) {
	f := newFakeAPIServer(t, proxyTo(echoServer(t)), etcdPod("n1", corev1.PodRunning))
	c, err := dialer(t, f, "etcd-n1").DialContext(context.Background(), "ignored:2379")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	// 1 MiB written while it is read back: both directions flow at once.
	payload := make([]byte, 1<<20)
	_, _ = rand.Read(payload)
	writeErr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		writeErr <- err
	}()
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("the echo differs from what was written")
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wsAttempts == 0 {
		t.Error("the dialer did not try the websocket tunnel first")
	}
	if len(f.spdyStreams) != 2 {
		t.Fatalf("%d streams, want an error and a data stream", len(f.spdyStreams))
	}
	for i, want := range []string{corev1.StreamTypeError, corev1.StreamTypeData} {
		h := f.spdyStreams[i]
		if h.Get(corev1.StreamType) != want || h.Get(corev1.PortHeader) != "2379" || h.Get(corev1.PortForwardRequestIDHeader) != "0" {
			t.Errorf("stream %d headers = %v, want type %s, port 2379, request ID 0", i, h, want)
		}
	}
	if a := c.RemoteAddr(); a.Network() != portforward.PortForwardProtocolV1Name || !strings.HasPrefix(a.String(), "portforward://openshift-etcd/etcd-n1:2379") {
		t.Errorf("RemoteAddr = %s %s", a.Network(), a)
	}
}

func TestPodDialerReportsKubeletError(t *testing.T) {
	// Nothing listens there any more: the "kubelet" reports why on the error stream.
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	f := newFakeAPIServer(t, proxyTo(addr), etcdPod("n1", corev1.PodRunning))
	c, err := dialer(t, f, "etcd-n1").DialContext(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, err = c.Read(make([]byte, 1))
	if err == nil || !strings.Contains(err.Error(), "error forwarding port 2379") ||
		!strings.Contains(err.Error(), "port-forward to pod openshift-etcd/etcd-n1 port 2379") {
		t.Fatalf("Read error = %v, want the kubelet's message", err)
	}
}

func TestPodDialerErrors(t *testing.T) {
	f := newFakeAPIServer(t, proxyTo(echoServer(t)), etcdPod("n1", corev1.PodRunning))
	t.Run("no such pod", func(t *testing.T) {
		_, err := dialer(t, f, "etcd-n2").DialContext(context.Background(), "")
		if err == nil || !strings.Contains(err.Error(), "port-forward to pod openshift-etcd/etcd-n2 port 2379: upgrading the connection") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("context done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := dialer(t, f, "etcd-n1").DialContext(ctx, "")
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestConnectChecksThePodFirst(t *testing.T) {
	p := newPKI(t)
	f := newFakeAPIServer(t, func(_, _ httpstream.Stream) { t.Error("port-forward opened") },
		etcdPod("n1", corev1.PodPending), p.secret(), p.configMap())
	_, err := NewPortForwarder().Connect(context.Background(), f.config(), "n1")
	if err == nil || err.Error() != "etcd pod openshift-etcd/etcd-n1 is not running (phase Pending)" {
		t.Fatalf("error = %v", err)
	}
	_, err = (&PortForwarder{}).Connect(context.Background(), f.config(), "n2")
	if err == nil || !strings.Contains(err.Error(), "etcd pod openshift-etcd/etcd-n2 not found") {
		t.Fatalf("error = %v", err)
	}
}

func TestConnectReportsMissingTLSMaterial(t *testing.T) {
	p := newPKI(t)
	f := newFakeAPIServer(t, func(_, _ httpstream.Stream) { t.Error("port-forward opened") },
		etcdPod("n1", corev1.PodRunning), p.configMap())
	_, err := NewPortForwarder().Connect(context.Background(), f.config(), "n1")
	if err == nil || !strings.Contains(err.Error(), "reading Secret openshift-etcd/etcd-client of the workload cluster: ") {
		t.Fatalf("error = %v", err)
	}
}

// startEtcd runs the etcd binary of the test assets (KUBEBUILDER_ASSETS, as make test sets it)
// with client TLS as CEO configures it, and returns its client address. It skips the test when
// there is no binary.
func startEtcd(t *testing.T, p *etcdPKI, name string) string {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	bin := filepath.Join(assets, "etcd")
	if _, err := os.Stat(bin); assets == "" || err != nil {
		t.Skip("no etcd binary: KUBEBUILDER_ASSETS (hack/ensure-envtest.sh) is not set")
	}
	dir := t.TempDir()
	write := func(file string, data []byte) string {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	freePort := func() string {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		return l.Addr().String()
	}
	clientAddr, peerAddr := freePort(), freePort()
	cmd := exec.CommandContext(context.Background(), bin, //nolint:gosec // the etcd binary of the test assets
		"--name="+name,
		"--data-dir="+filepath.Join(dir, "data"),
		"--listen-client-urls=https://"+clientAddr,
		"--advertise-client-urls=https://"+clientAddr,
		"--listen-peer-urls=http://"+peerAddr,
		"--initial-advertise-peer-urls=http://"+peerAddr,
		"--initial-cluster="+name+"=http://"+peerAddr,
		"--cert-file="+write("serving.crt", p.serving.CertPEM),
		"--key-file="+write("serving.Key", p.serving.KeyPEM),
		"--trusted-ca-file="+write("ca.crt", p.ca.CertPEM),
		"--client-cert-auth",
		"--unsafe-no-fsync",
		"--log-level=error",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("etcd output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(context.Background(), "tcp", clientAddr)
		if err == nil {
			_ = c.Close()
			return clientAddr
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd does not listen on %s: %v", clientAddr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectToARealEtcd goes the whole way: Connect reads the pod, the Secret and the ConfigMap
// from the fake API server, port-forwards through it to a real etcd that requires client
// certificates, verifies the serving certificate for "localhost", and Members works through it.
func TestConnectToARealEtcd(t *testing.T) {
	p := newPKI(t)
	etcdAddr := startEtcd(t, p, "n1")
	f := newFakeAPIServer(t, proxyTo(etcdAddr), etcdPod("n1", corev1.PodRunning), p.secret(), p.configMap())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pf := NewPortForwarder()
	cli, err := pf.Connect(ctx, f.config(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	if eps := cli.Endpoints(); len(eps) != 1 || eps[0] != "https://localhost:2379" {
		t.Errorf("endpoints = %v", eps)
	}
	list, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatalf("MemberList through the port-forward: %v", err)
	}
	if len(list.Members) != 1 || list.Members[0].Name != "n1" {
		t.Fatalf("members = %v", list.Members)
	}
	if _, err := cli.Put(ctx, "/portforward-test", "ok"); err != nil {
		t.Fatalf("Put: %v", err)
	}

	cluster, err := (&Workload{Connector: pf, Config: f.config()}).Members(ctx, []string{"n1"})
	if err != nil {
		t.Fatalf("Members: %v", err)
	}
	m := cluster.Member("n1")
	if len(cluster.Members) != 1 || m == nil || !m.Healthy || !m.IsLeader || m.IsLearner {
		t.Fatalf("cluster = %+v", cluster)
	}

	t.Run("serving certificate of another CA", func(t *testing.T) {
		other := newPKI(t)
		f := newFakeAPIServer(t, proxyTo(etcdAddr), etcdPod("n1", corev1.PodRunning), p.secret(), other.configMap())
		cli, err := (&PortForwarder{DialTimeout: 2 * time.Second}).Connect(ctx, f.config(), "n1")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cli.Close() }()
		callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, err := cli.MemberList(callCtx); err == nil {
			t.Fatal("MemberList succeeded against a member whose certificate the bundle does not verify")
		}
	})
}

// TestPodDialerLeavesNothingBehindOnTimeout: an API server that accepts the port-forward's
// connection and never answers makes each dial fail at its timeout, and every dial's goroutines
// and connections end with it (client-go's websocket dialer has no timeout of its own: each
// timed-out dial used to leave four goroutines waiting for good).
func TestPodDialerLeavesNothingBehindOnTimeout(t *testing.T) {
	var hung atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		select { // never answers; gone when the client closes the connection (or the test ends)
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // first: a leaking dialer never closes its connection
	cfg := &rest.Config{Host: srv.URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newPodDialer(cfg, cs, EtcdNamespace, "etcd-n1", etcdClientPort, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	before := goruntime.NumGoroutine()
	const dials = 10
	for range dials {
		_, err := d.DialContext(context.Background(), "")
		if err == nil || !strings.Contains(err.Error(), "port-forward to pod openshift-etcd/etcd-n1 port 2379") {
			t.Fatalf("DialContext error = %v, want the timeout", err)
		}
	}
	if n := hung.Load(); n < dials {
		t.Fatalf("the API server saw %d requests, want at least %d (one per dial)", n, dials)
	}
	deadline := time.Now().Add(10 * time.Second)
	for goruntime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after %d dials, %d before: the dials left theirs behind:\n%s",
				goruntime.NumGoroutine(), dials, before, buf[:goruntime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
