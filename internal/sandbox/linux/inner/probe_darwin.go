package inner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The inner stage, launcher and supervisors exist on Linux only: on macOS
// sandbox-exec puts up the walls.
func execInner(HelperConfig, []string) error {
	return errors.New("the inner stage exists on Linux only")
}

func serveLauncher(HelperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

func serveSupervisor(HelperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

// runProbe performs one attempted escape (or one thing that must work)
// from inside the sandbox for the darwin battery: it prints "ESCAPED" (or
// "works") and exits 0 when the kernel let it through, "denied: …" and
// exits 2 otherwise.
func runProbe(args []string) int {
	if len(args) < 1 {
		fmt.Println("denied: no probe named")
		return 2
	}
	arg := func(i int) string {
		if len(args) > i {
			return args[i]
		}
		return ""
	}
	var err error
	ok := "ESCAPED"
	switch args[0] {
	case "connect-unix", "connect-tcp":
		network := "unix"
		if args[0] == "connect-tcp" {
			network = "tcp"
		}
		var c net.Conn
		if c, err = net.Dial(network, arg(1)); err == nil {
			c.Write([]byte("escaped\n"))
			c.Close()
		}
	case "open-tty":
		// Reading or writing a terminal the command did not open.
		var fd int
		if fd, err = unix.Open(arg(1), unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0); err == nil {
			c := byte('X')
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			unix.Write(fd, []byte("escaped\n"))
			unix.Close(fd)
			if e != 0 {
				fmt.Println("opened, TIOCSTI:", e)
			}
		}
	case "own-pty":
		// A pseudo-terminal the command makes itself must work.
		ok = "works"
		var m, s *os.File
		if m, s, err = OpenPty(); err == nil {
			_, err = s.Write([]byte("x\n"))
			m.Close()
			s.Close()
		}
	case "unix-loopback":
		// A server and client on a unix socket in the session's directory.
		ok = "works"
		var l net.Listener
		if l, err = net.Listen("unix", filepath.Join(arg(1), "probe.sock")); err == nil {
			go func() {
				if c, e := l.Accept(); e == nil {
					c.Write([]byte("hi"))
					c.Close()
				}
			}()
			var c net.Conn
			if c, err = net.Dial("unix", filepath.Join(arg(1), "probe.sock")); err == nil {
				b := make([]byte, 2)
				_, err = c.Read(b)
				c.Close()
			}
			l.Close()
		}
	case "session":
		// The command must not share harness's session (job control,
		// its controlling terminal).
		host, _ := strconv.Atoi(arg(1))
		var sid int
		if sid, err = unix.Getsid(0); err == nil && sid != host {
			err = fmt.Errorf("in session %d, harness in %d", sid, host)
		}
	case "trustd-fetch":
		// Verifying a certificate whose issuer is missing, with the
		// issuer's, OCSP and CRL URLs at a host listener, through the
		// platform verifier (trustd): a reachable trustd fetches them from
		// outside the walls. The host checks its listener; the
		// verification itself fails either way.
		err = verifyFetching(arg(1))
		if err == nil {
			err = errors.New("verified (unexpectedly)")
		}
	case "procargs":
		// Another process's arguments and environment (KERN_PROCARGS2).
		pid, _ := strconv.Atoi(arg(1))
		var b []byte
		if b, err = unix.SysctlRaw("kern.procargs2", pid); err == nil && len(b) == 0 {
			err = errors.New("empty")
		}
	default:
		err = fmt.Errorf("unknown probe %q", args[0])
	}
	if err != nil {
		fmt.Printf("denied: %v\n", err)
		return 2
	}
	fmt.Println(ok)
	return 0
}

// verifyFetching verifies, with the system's roots (so through
// Security.framework and trustd), a leaf whose issuer is nowhere but at
// base's URLs.
func verifyFetching(base string) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "harness battery missing CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "harness-battery.invalid"},
		DNSNames: []string{"harness-battery.invalid"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		IssuingCertificateURL: []string{base + "/ca.cer"}, OCSPServer: []string{base + "/ocsp"},
		CRLDistributionPoints: []string{base + "/ca.crl"}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: "harness-battery.invalid"})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("verification still waiting after 10s (on a fetch?)")
	}
}

// openPty opens a pseudo-terminal pair (posix_openpt, grantpt, unlockpt,
// ptsname by their ioctls).
func OpenPty() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, *os.File, error) { unix.Close(m); return nil, nil, err }
	if err := unix.IoctlSetInt(m, unix.TIOCPTYGRANT, 0); err != nil {
		return fail(err)
	}
	if err := unix.IoctlSetInt(m, unix.TIOCPTYUNLK, 0); err != nil {
		return fail(err)
	}
	// TIOCPTYGNAME fills 128 bytes; IoctlSetTermios is x/sys's pointer
	// ioctl, given a buffer that size (Termios is smaller: never read).
	var buf [16]uint64
	if err := unix.IoctlSetTermios(m, unix.TIOCPTYGNAME, (*unix.Termios)(unsafe.Pointer(&buf[0]))); err != nil {
		return fail(err)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 128)
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	s, err := unix.Open(string(b[:n]), unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fail(err)
	}
	return os.NewFile(uintptr(m), "/dev/ptmx"), os.NewFile(uintptr(s), string(b[:n])), nil
}
