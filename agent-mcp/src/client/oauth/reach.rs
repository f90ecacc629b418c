//! How far an MCP server may send its client's OAuth requests.
//!
//! Discovery follows URLs the MCP server hands out (its `401`'s resource metadata, the
//! authorization servers that names, their endpoints, redirects). A server could point
//! them at the client's own network, making the client request its internal services
//! or a cloud metadata endpoint for it. rmcp checks the host strings of the metadata
//! URLs it discovers, and leaves the addresses a client connects to to the client: here
//! every OAuth request may reach public addresses only, unless the application allows
//! loopback, private networks, or any address ([`Allowed`]). Names are checked as they
//! are resolved, every address of them, so a name cannot change its answer between a
//! check and the connection; literal addresses are checked on every request and
//! redirect. Through a proxy, the proxy resolves names: literal addresses are still
//! checked.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

/// Where an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reach {
    /// Routable on the internet.
    Public,
    /// A private network: RFC 1918, shared address space (100.64.0.0/10), IPv6 unique
    /// local and site-local.
    Private,
    /// This machine.
    Loopback,
    /// Link-local, unspecified, multicast, broadcast, documentation, benchmarking or
    /// reserved: never an authorization server's address on the internet, and
    /// link-local is where cloud instances find their metadata service.
    Special,
}

/// Where `ip` is. IPv6 addresses that carry an IPv4 address (mapped, compatible, NAT64,
/// 6to4) are where that IPv4 address is, since that is where a gateway sends them.
pub(crate) fn reach(ip: IpAddr) -> Reach {
    match ip {
        IpAddr::V4(v4) => reach_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return reach_v4(v4);
            }
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Reach::Loopback
            } else if v6.is_unspecified()
                || v6.is_multicast()
                // Link-local fe80::/10, documentation 2001:db8::/32 and 3fff::/20,
                // benchmarking 2001:2::/48, discard 100::/64.
                || first & 0xffc0 == 0xfe80
                || (first == 0x2001 && v6.segments()[1] == 0x0db8)
                || (first == 0x3fff && v6.segments()[1] & 0xf000 == 0)
                || (first == 0x2001 && v6.segments()[1] == 0x0002 && v6.segments()[2] == 0)
                || (first == 0x0100 && v6.segments()[1..4] == [0, 0, 0])
            {
                Reach::Special
            } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
                // Unique local fc00::/7, and the deprecated site-local fec0::/10.
                Reach::Private
            } else {
                Reach::Public
            }
        }
    }
}

fn reach_v4(v4: Ipv4Addr) -> Reach {
    let [a, b, c, _] = v4.octets();
    if v4.is_loopback() {
        Reach::Loopback
    } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
        Reach::Private
    } else if v4.is_link_local()
        || v4.is_multicast()
        || v4.is_broadcast()
        || v4.is_documentation()
        // "This network" 0.0.0.0/8, IETF protocol assignments 192.0.0.0/24,
        // benchmarking 198.18.0.0/15, reserved 240.0.0.0/4.
        || a == 0
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b & 0xfe) == 18)
        || a >= 240
    {
        Reach::Special
    } else {
        Reach::Public
    }
}

/// The IPv4 address an IPv6 address carries, if it is one that does: IPv4-mapped
/// (::ffff:0:0/96), IPv4-compatible (::/96, beside :: and ::1), NAT64 (64:ff9b::/96)
/// or 6to4 (2002::/16).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let low = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6] == [0; 6] && !v6.is_unspecified() && !v6.is_loopback() {
        return Some(low(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(low(s[1], s[2]));
    }
    None
}

/// The literal address a URL's host is, if it is one.
fn literal_host(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Which addresses beyond public ones OAuth requests may reach: the application's
/// choice, nothing by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Allowed {
    /// This machine (for development, and tests).
    pub(crate) loopback: bool,
    /// Private networks (an intranet's authorization server).
    pub(crate) private: bool,
    /// Every address, special ones included.
    pub(crate) any: bool,
}

impl Allowed {
    fn allows(self, place: Reach) -> bool {
        self.any
            || match place {
                Reach::Public => true,
                Reach::Private => self.private,
                Reach::Loopback => self.loopback,
                Reach::Special => false,
            }
    }
}

/// The rule for one MCP server's OAuth requests: its DNS resolver, and the check of
/// literal addresses for requests and redirects.
pub(crate) struct ReachGuard {
    allowed: Allowed,
    /// The last request refused: discovery tries its candidates in turn and reports
    /// only that none answered, so the reason is kept for the error the user sees.
    last_refusal: Mutex<Option<String>>,
}

impl ReachGuard {
    /// The guard letting OAuth requests reach public addresses and what `allowed` adds.
    pub(crate) fn new(allowed: Allowed) -> Arc<Self> {
        Arc::new(Self {
            allowed,
            last_refusal: Mutex::new(None),
        })
    }

    /// Whether an OAuth request may go to `ip`.
    fn allows(&self, ip: IpAddr) -> bool {
        self.allowed.allows(reach(ip))
    }

    /// Why a request to `ip` (reached as `what`) is refused, kept as the last refusal.
    fn refusal(&self, what: &str, ip: IpAddr) -> String {
        let refusal = self.reason(what, ip);
        *self
            .last_refusal
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(refusal.clone());
        refusal
    }

    /// Why a request to `ip` (reached as `what`) is refused.
    fn reason(&self, what: &str, ip: IpAddr) -> String {
        let (place, lift) = match reach(ip) {
            Reach::Private => (
                "a private-network",
                "`OAuthOptions::allow_private_networks`",
            ),
            Reach::Loopback => ("a loopback", "`OAuthOptions::allow_loopback`"),
            Reach::Public | Reach::Special => (
                "a link-local or other special-purpose",
                "only `OAuthOptions::allow_any_address`",
            ),
        };
        format!(
            "OAuth request to {what} refused: {ip} is {place} address, and OAuth requests \
             the MCP server directs go to public addresses unless allowed ({lift} allows it)"
        )
    }

    /// Why `url` would be refused, when its host is a literal address the guard does
    /// not allow; nothing is recorded.
    pub(crate) fn would_refuse(&self, url: &reqwest::Url) -> Option<String> {
        literal_host(url)
            .filter(|ip| !self.allows(*ip))
            .map(|ip| self.reason(url.as_str(), ip))
    }

    /// The last request refused, taken: the reason behind a discovery that found
    /// nothing.
    pub(crate) fn take_refusal(&self) -> Option<String> {
        self.last_refusal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Checks `url` when its host is a literal address (names are checked as they are
    /// resolved).
    pub(crate) fn check_literal(&self, url: &reqwest::Url) -> Result<(), String> {
        match literal_host(url) {
            Some(ip) if !self.allows(ip) => Err(self.refusal(url.as_str(), ip)),
            _ => Ok(()),
        }
    }

    /// A redirect policy following at most `max` redirects, each to an allowed place.
    pub(crate) fn redirects(self: &Arc<Self>, max: usize) -> reqwest::redirect::Policy {
        let guard = Arc::clone(self);
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max {
                return attempt.error(format!("more than {max} redirects"));
            }
            match guard.check_literal(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(refusal) => attempt.error(refusal),
            }
        })
    }
}

/// The DNS resolver of the OAuth requests: names resolved as the system does, keeping
/// only the addresses the guard allows; a name with none left is refused.
pub(crate) struct GuardedResolver(pub(crate) Arc<ReachGuard>);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = Arc::clone(&self.0);
        Box::pin(async move {
            let host = name.as_str();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|address| guard.allows(address.ip()))
                .collect();
            match (allowed.is_empty(), found.first()) {
                (true, Some(refused)) => Err(guard.refusal(host, refused.ip()).into()),
                _ => Ok(Box::new(allowed.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn url(text: &str) -> reqwest::Url {
        reqwest::Url::parse(text).unwrap()
    }

    #[test]
    fn addresses_are_placed_from_the_internet_inwards() {
        for public in [
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "192.0.1.1",
            "198.20.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(reach(ip(public)), Reach::Public, "{public}");
        }
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "fd00::1",
            "fec0::1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:101::1",
        ] {
            assert_eq!(reach(ip(private)), Reach::Private, "{private}");
        }
        for loopback in [
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            assert_eq!(reach(ip(loopback)), Reach::Loopback, "{loopback}");
        }
        for special in [
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.7",
            "198.18.0.1",
            "fe80::1",
            "::",
            "ff02::1",
            "2001:db8::1",
            "3fff::1",
            "100::1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert_eq!(reach(ip(special)), Reach::Special, "{special}");
        }
    }

    #[tokio::test]
    async fn by_default_only_public_addresses_are_reached() {
        let guard = ReachGuard::new(Allowed::default());
        for inside in [
            "http://127.0.0.1:8080/token",
            "http://10.0.0.5/.well-known/oauth-authorization-server",
            "http://[::1]/token",
            "http://[::ffff:7f00:1]/token",
            "http://169.254.169.254/latest/meta-data/",
            "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
        ] {
            let error = guard.check_literal(&url(inside)).expect_err(inside);
            assert!(error.contains("refused"), "{error}");
        }
        assert!(guard.check_literal(&url("https://8.8.8.8/token")).is_ok());
        // Names are refused when they resolve inside.
        let refused = GuardedResolver(Arc::clone(&guard))
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .expect("localhost is refused")
            .to_string();
        assert!(refused.contains("localhost"), "{refused}");
        assert!(refused.contains("allow_loopback"), "{refused}");
    }

    #[tokio::test]
    async fn each_allowance_opens_its_own_place_only() {
        let loopback = ReachGuard::new(Allowed {
            loopback: true,
            ..Allowed::default()
        });
        assert!(
            loopback
                .check_literal(&url("http://127.0.0.1:9000/token"))
                .is_ok()
        );
        assert!(
            loopback
                .check_literal(&url("https://8.8.8.8/token"))
                .is_ok()
        );
        let error = loopback
            .check_literal(&url("http://192.168.0.9/token"))
            .expect_err("the private network is another place");
        assert!(error.contains("allow_private_networks"), "{error}");
        let error = loopback
            .check_literal(&url("http://169.254.169.254/latest/meta-data/"))
            .expect_err("link-local is refused");
        assert!(error.contains("link-local"), "{error}");
        assert!(
            GuardedResolver(Arc::clone(&loopback))
                .resolve("localhost".parse().unwrap())
                .await
                .is_ok()
        );
        let private = ReachGuard::new(Allowed {
            private: true,
            ..Allowed::default()
        });
        assert!(private.check_literal(&url("http://10.9.9.9/token")).is_ok());
        assert!(
            private
                .check_literal(&url("http://127.0.0.1/token"))
                .is_err()
        );
        assert!(
            private
                .check_literal(&url("http://169.254.169.254/latest/meta-data/"))
                .is_err()
        );
    }

    #[tokio::test]
    async fn the_application_may_lift_the_rule() {
        let guard = ReachGuard::new(Allowed {
            any: true,
            ..Allowed::default()
        });
        let metadata = url("http://169.254.169.254/latest/meta-data/");
        assert!(guard.check_literal(&metadata).is_ok());
    }
}
