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
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"k8s.io/client-go/rest"
)

// SingleMembers answers, for every node, as the etcd of a healthy single-node OpenShift cluster:
// one voting member named after the node, leading, with no alarm. It serves the three calls the
// control-plane provider makes of a member (MemberList, AlarmList, Status: Workload.Members) from
// one gRPC server for every cluster, where Simulator runs a real etcd process per node: the fleet
// benchmark, with hundreds of single-node clusters, measures the providers, not etcd, and cannot
// afford hundreds of etcd processes. It is a Connector (as the real one, it is asked per node).
type SingleMembers struct {
	once sync.Once
	addr string
	srv  *grpc.Server
	err  error
}

// Connect returns a client of the member on node. The endpoint names the node, which the server
// reads from the request's :authority; the connection is always the server's, as the real
// connector's is always the port-forward's (controlplane/internal/etcd/portforward.go).
func (s *SingleMembers) Connect(ctx context.Context, _ *rest.Config, node string) (*clientv3.Client, error) {
	s.once.Do(s.start)
	if s.err != nil {
		return nil, s.err
	}
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", s.addr)
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{"http://" + net.JoinHostPort(node, "2379")},
		DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial)},
		Context:     ctx,
		Logger:      zap.NewNop(),
	})
}

// Stop stops the server.
func (s *SingleMembers) Stop() {
	if s.srv != nil {
		s.srv.Stop()
	}
}

func (s *SingleMembers) start() {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		s.err = fmt.Errorf("starting the single-member etcd server: %w", err)
		return
	}
	s.addr = l.Addr().String()
	s.srv = grpc.NewServer()
	pb.RegisterClusterServer(s.srv, &singleMemberServer{})
	pb.RegisterMaintenanceServer(s.srv, &singleMemberServer{})
	go func() { _ = s.srv.Serve(l) }()
}

// singleMemberServer is the member of the node the request names.
type singleMemberServer struct {
	pb.UnimplementedClusterServer
	pb.UnimplementedMaintenanceServer
}

// node returns the node a request is for: the host of its :authority.
func node(ctx context.Context) (string, uint64, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	authority := md.Get(":authority")
	if len(authority) == 0 {
		return "", 0, errors.New("the request names no node (:authority)")
	}
	host, _, err := net.SplitHostPort(authority[0])
	if err != nil {
		host = authority[0]
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(host))
	return host, h.Sum64() | 1, nil // a member ID is never 0
}

func header(id uint64) *pb.ResponseHeader {
	return &pb.ResponseHeader{ClusterId: id, MemberId: id, Revision: 1, RaftTerm: 2}
}

func (*singleMemberServer) MemberList(ctx context.Context, _ *pb.MemberListRequest) (*pb.MemberListResponse, error) {
	name, id, err := node(ctx)
	if err != nil {
		return nil, err
	}
	url := "https://" + net.JoinHostPort(strings.ToLower(name), "2379")
	return &pb.MemberListResponse{Header: header(id), Members: []*pb.Member{{
		ID: id, Name: name, PeerURLs: []string{strings.Replace(url, "2379", "2380", 1)}, ClientURLs: []string{url},
	}}}, nil
}

func (*singleMemberServer) Alarm(ctx context.Context, _ *pb.AlarmRequest) (*pb.AlarmResponse, error) {
	_, id, err := node(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.AlarmResponse{Header: header(id)}, nil
}

func (*singleMemberServer) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	_, id, err := node(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.StatusResponse{Header: header(id), Version: "3.5.21", DbSize: 64 << 20, DbSizeInUse: 32 << 20,
		Leader: id, RaftIndex: 100, RaftTerm: 2, RaftAppliedIndex: 100}, nil
}
