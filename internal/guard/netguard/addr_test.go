package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNonPublic(t *testing.T) {
	cases := []struct {
		addr string
		want string // a part of the range's name; "" for a public address
	}{
		// IPv4.
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"10.0.0.1", "RFC 1918"},
		{"172.16.0.1", "RFC 1918"},
		{"172.31.255.255", "RFC 1918"},
		{"192.168.1.1", "RFC 1918"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"169.254.169.254", "link-local"},
		{"0.0.0.0", "this network"},
		{"0.1.2.3", "this network"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.0.8", "IETF"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"192.88.99.1", "6to4 relay"},
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"169.253.255.255", ""},
		{"198.17.255.255", ""},
		{"93.184.215.14", ""},
		// IPv6.
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf:ffff::1", "link-local"},
		{"fc00::1", "unique-local"},
		{"fd00:ec2::254", "unique-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"::ffff:127.0.0.1", "IPv4-mapped, embedding 127.0.0.1, which is loopback"},
		{"::ffff:169.254.169.254", "IPv4-mapped, embedding 169.254.169.254, which is link-local"},
		{"::ffff:10.1.2.3", "IPv4-mapped"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::7f00:1", "NAT64, embedding 127.0.0.1, which is loopback"},
		{"64:ff9b::a9fe:a9fe", "NAT64, embedding 169.254.169.254"},
		{"64:ff9b::c0a8:101", "NAT64, embedding 192.168.1.1"},
		{"64:ff9b::808:808", ""},
		{"64:ff9b:1::7f00:1", "local-use NAT64"},
		{"64:ff9b:1:7f00:1::", "local-use NAT64"},
		{"2002:7f00:1::1", "6to4, embedding 127.0.0.1, which is loopback"},
		{"2002:a00:1::", "6to4, embedding 10.0.0.1"},
		{"2002:a9fe:a9fe::1", "6to4, embedding 169.254.169.254"},
		{"2002:808:808::1", ""},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"2001:2::1", "benchmarking"},
		{"2001:10::1", "ORCHID"},
		{"100::1", "discard-only"},
		{"4000::1", "outside the global unicast range"},
		{"::2", "IPv4-compatible"},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
	}
	for _, c := range cases {
		name, got := NonPublic(netip.MustParseAddr(c.addr))
		if got != (c.want != "") || !strings.Contains(name, c.want) {
			t.Errorf("NonPublic(%s) = %q, %v; want non-public %v with a name containing %q", c.addr, name, got, c.want != "", c.want)
		}
	}
	if _, ok := NonPublic(netip.Addr{}); !ok {
		t.Error("the zero Addr is reported public")
	}
}

func TestCheckAddr(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")}
	cases := []struct {
		opts    Options
		addr    string
		blocked bool
	}{
		{Options{}, "127.0.0.1", false},
		{Options{}, "169.254.169.254", false},
		{Options{BlockPrivate: true}, "127.0.0.1", true},
		{Options{BlockPrivate: true}, "8.8.8.8", false},
		{Options{BlockPrivate: true, Allow: allow}, "127.0.0.1", false},
		{Options{BlockPrivate: true, Allow: allow}, "::ffff:127.0.0.1", false},
		{Options{BlockPrivate: true, Allow: allow}, "127.0.0.2", true},
		{Options{BlockPrivate: true, Allow: allow}, "fd00:ec2::254", false},
		{Options{BlockPrivate: true, Allow: allow}, "fc00::1", true},
		{Options{BlockPrivate: true, Allow: allow}, "169.254.169.254", true},
	}
	for _, c := range cases {
		err := c.opts.CheckAddr(netip.MustParseAddr(c.addr))
		if (err != nil) != c.blocked || (err != nil && !errors.Is(err, ErrBlocked)) {
			t.Errorf("CheckAddr(%s) with %+v = %v, want blocked %v", c.addr, c.opts, err, c.blocked)
		}
	}
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow(" 10.1.2.3/24, 192.168.1.5,, fd00::/8 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("192.168.1.5/32"),
		netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("::1/128"),
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("ParseAllow (-want +got):\n%s", diff)
	}
	if got, err := ParseAllow(""); got != nil || err != nil {
		t.Errorf("ParseAllow(\"\") = %v, %v", got, err)
	}
	for _, bad := range []string{"example.com", "10.0.0.0/33", "10.0.0.1/", "fe80::1%eth0", "*"} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}
