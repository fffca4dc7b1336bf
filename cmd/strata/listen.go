package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// listen opens the plain port and the TLS port on every bind address, as
// redis-server does; a port of 0 is not opened. It runs before the bucket
// is opened: a taken port or an unreadable certificate is the commonest
// mistake, and should not cost a bucket round trip to report.
func (f *serverFlags) listen() ([]net.Listener, error) {
	if f.port == 0 && f.tls.Port == 0 {
		return nil, errors.New("configured to not listen anywhere: port and tls-port are both 0")
	}
	var tlsCfg *tls.Config
	if f.tls.Port != 0 {
		cfg, err := f.tls.Config()
		if err != nil {
			return nil, err
		}
		tlsCfg = cfg
	} else if err := f.tls.Validate(); err != nil {
		return nil, err
	}
	ports := []struct {
		port int
		tls  *tls.Config
	}{{f.port, nil}, {f.tls.Port, tlsCfg}}
	var lns []net.Listener
	for _, host := range strings.Fields(f.bind) {
		for _, p := range ports {
			if p.port == 0 {
				continue
			}
			addr := net.JoinHostPort(host, strconv.Itoa(p.port))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				for _, l := range lns {
					l.Close()
				}
				return nil, fmt.Errorf("cannot listen on %s: %v", addr, errors.Unwrap(err))
			}
			if p.tls != nil {
				ln = tls.NewListener(ln, p.tls)
			}
			lns = append(lns, ln)
		}
	}
	if len(lns) == 0 {
		return nil, errors.New("bind names no address")
	}
	return lns, nil
}

// parseYesNo parses a redis.conf boolean.
func parseYesNo(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("%s must be yes or no, not %q", name, v)
}
