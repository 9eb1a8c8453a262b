package permission

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The default rules deny curl and wget: a model has no business fetching
// or sending whatever it likes. But when the user allowed a host
// explicitly (--allow-net, an "allow net" rule), an ordinary request of
// that host with one of them is what the user asked for, and refusing it
// left the user's rule useless (the proxy would have let the connection
// through). So a default deny of a network client gives way when every
// URL the command names is allowed by a rule the user wrote, and the
// command uses no option that could send the request elsewhere (a proxy,
// a config file, a name resolution of its own) or read URLs from
// somewhere else; the decision names the rule that beat the default. A
// deny the user wrote is never beaten, and the proxy still decides every
// connection the command makes (a redirect to another host is refused
// there).

// clientSpec is what harness knows of a network client's options.
type clientSpec struct {
	plain     map[string]bool // options without a value that change nothing about where
	withValue map[string]bool // options whose value is not a target
	urlOpt    map[string]bool // options whose value is a URL
	defScheme string          // the scheme a URL without one gets
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// From curl(1) and wget(1); anything not listed keeps the default deny.
var netClients = map[string]clientSpec{
	"curl": {
		plain: words("-s --silent -S --show-error -f --fail --fail-with-body -L --location -I --head -i --include -v --verbose " +
			"-k --insecure --compressed -O --remote-name -J --remote-header-name -g --globoff -# --progress-bar -N --no-buffer " +
			"--http1.1 --http2 -4 -6 --ipv4 --ipv6 -G --get -R --remote-time --create-dirs --no-progress-meter"),
		withValue: words("-o --output -H --header -X --request -d --data --data-raw --data-binary --data-urlencode --json " +
			"-A --user-agent -e --referer -m --max-time --connect-timeout --retry --retry-delay --retry-max-time -w --write-out " +
			"-u --user -b --cookie -c --cookie-jar -r --range -z --time-cond --limit-rate --max-filesize -F --form --output-dir --noproxy"),
		urlOpt:    words("--url"),
		defScheme: "http",
	},
	"wget": {
		plain: words("-q --quiet -nv --no-verbose -v --verbose -S --server-response -c --continue -N --timestamping " +
			"--no-check-certificate -4 -6 --inet4-only --inet6-only -nc --no-clobber --content-disposition -np --no-parent --no-proxy"),
		withValue: words("-O --output-document -P --directory-prefix -T --timeout -t --tries --header --user-agent -U " +
			"--post-data --method --body-data -o --output-file -a --append-output --wait --limit-rate --user --password"),
		defScheme: "http",
	},
}

// userAllowedClient decides a network client's command (toks, the client
// named base) that a default rule denied: it returns the rule the user
// wrote that allows every URL it names, or false.
func (g *Gate) userAllowedClient(base string, toks []token) (string, bool) {
	spec, ok := netClients[base]
	if !ok {
		return "", false
	}
	var urls []string
	args := toks[1:]
	for i := 0; i < len(args); i++ {
		t := args[i]
		if t.dyn || t.glob {
			return "", false
		}
		w := t.s
		if w == "--" {
			for _, r := range args[i+1:] {
				if r.dyn || r.glob {
					return "", false
				}
				urls = append(urls, r.s)
			}
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			urls = append(urls, w)
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		switch {
		case spec.plain[w]:
		case spec.withValue[name] || spec.urlOpt[name]:
			if !hasVal {
				if i+1 >= len(args) || args[i+1].dyn {
					return "", false
				}
				i++
				val = args[i].s
			}
			if spec.urlOpt[name] {
				urls = append(urls, val)
			}
		default:
			// Combined short options (-sSL, -qO-): plain ones, then
			// perhaps one that takes the rest, or the next word, as its
			// value.
			if strings.HasPrefix(w, "--") || len(w) < 3 {
				return "", false
			}
			for j := 1; j < len(w); j++ {
				o := "-" + w[j:j+1]
				if spec.plain[o] {
					continue
				}
				if !spec.withValue[o] {
					return "", false
				}
				if j == len(w)-1 {
					if i+1 >= len(args) || args[i+1].dyn {
						return "", false
					}
					i++
				}
				break
			}
		}
	}
	if len(urls) == 0 {
		return "", false
	}
	var rules []string
	for _, u := range urls {
		host, port, ok := urlTarget(u, spec.defScheme)
		if !ok {
			return "", false
		}
		d, _ := g.DecideNet(NetRequest{Host: host, Port: port})
		if d.Verdict != Allow || strings.HasPrefix(d.Rule, "yolo") {
			return "", false
		}
		if !slices.Contains(rules, d.Rule) {
			rules = append(rules, d.Rule)
		}
	}
	return strings.Join(rules, ", "), true
}

// urlTarget is the host and port a client's URL argument reaches; only
// http and https, and no URL globbing in the host.
func urlTarget(raw, defScheme string) (string, int, bool) {
	if !strings.Contains(raw, "://") {
		raw = defScheme + "://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "{}[]*?") && !strings.HasPrefix(u.Host, "[") {
		return "", 0, false
	}
	port := 0
	switch strings.ToLower(u.Scheme) {
	case "http":
		port = 80
	case "https":
		port = 443
	default:
		return "", 0, false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, false
		}
		port = n
	}
	host := u.Hostname()
	if host == "" || strings.ContainsAny(host, "{}[]*?") {
		return "", 0, false
	}
	if ip := net.ParseIP(host); ip == nil && strings.ContainsAny(host, "%@") {
		return "", 0, false
	}
	return host, port, true
}
