//! How far an MCP server may send its client's OAuth requests.
//!
//! Discovery follows URLs the MCP server hands out (its `401`'s resource metadata, the
//! authorization servers that names, their endpoints, redirects). A server could point
//! them at the client's own network, making the client request its internal services
//! or a cloud metadata endpoint for it. rmcp checks the host strings of the metadata
//! URLs it discovers, and leaves the addresses a client connects to to the client: here
//! every OAuth request may reach public addresses, and private or loopback ones only
//! when the MCP server itself is on such an address (the rule rmcp applies to its own
//! client); link-local and other special addresses (where cloud instances find their
//! metadata service) never. Names are checked as they are resolved, every address of
//! them, so a name cannot change its answer between a check and the connection;
//! literal addresses are checked on every request and redirect. Through a proxy, the
//! proxy resolves names: literal addresses are still checked.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OnceCell;

/// Where an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reach {
    /// Routable on the internet.
    Public,
    /// A private network: RFC 1918, shared address space (100.64.0.0/10), IPv6 unique
    /// local.
    Private,
    /// This machine.
    Loopback,
    /// Link-local, unspecified, multicast or broadcast: never a server's address, and
    /// where cloud instances find their metadata service.
    LinkLocal,
}

/// Where `ip` is.
pub(crate) fn reach(ip: IpAddr) -> Reach {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_link_local() || v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast() {
                Reach::LinkLocal
            } else if v4.is_loopback() {
                Reach::Loopback
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Reach::Private
            } else {
                Reach::Public
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return reach(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            if v6.is_unspecified() || v6.is_multicast() || first & 0xffc0 == 0xfe80 {
                Reach::LinkLocal
            } else if v6.is_loopback() {
                Reach::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                Reach::Private
            } else {
                Reach::Public
            }
        }
    }
}

/// The literal address a URL's host is, if it is one.
fn literal_host(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The rule for one MCP server's OAuth requests: its DNS resolver, and the check of
/// literal addresses for requests and redirects.
pub(crate) struct ReachGuard {
    /// The MCP server's URL.
    server: String,
    /// Where the server is, found at the first request.
    server_reach: OnceCell<Reach>,
    /// Every address allowed (the application's choice).
    anywhere: bool,
    /// The last request refused: discovery tries its candidates in turn and reports
    /// only that none answered, so the reason is kept for the error the user sees.
    last_refusal: Mutex<Option<String>>,
}

impl ReachGuard {
    /// The guard for the MCP server at `server`; `anywhere` lifts it.
    pub(crate) fn new(server: &str, anywhere: bool) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_owned(),
            server_reach: OnceCell::new(),
            anywhere,
            last_refusal: Mutex::new(None),
        })
    }

    /// Where the MCP server is: the innermost of its addresses (the unspecified address,
    /// which connects to this machine, counting as loopback). A name that does not
    /// resolve counts as public, the strictest.
    pub(crate) async fn server_reach(&self) -> Reach {
        let place = |ip: IpAddr| {
            if ip.is_unspecified() {
                Reach::Loopback
            } else {
                reach(ip)
            }
        };
        *self
            .server_reach
            .get_or_init(|| async {
                let Ok(url) = reqwest::Url::parse(&self.server) else {
                    return Reach::Public;
                };
                if let Some(ip) = literal_host(&url) {
                    return place(ip);
                }
                let Some(host) = url.host_str() else {
                    return Reach::Public;
                };
                match tokio::net::lookup_host((host, 0)).await {
                    Ok(addresses) => addresses
                        .map(|address| place(address.ip()))
                        .max()
                        .unwrap_or(Reach::Public),
                    Err(_) => Reach::Public,
                }
            })
            .await
    }

    /// Whether an OAuth request may go to `ip`, the MCP server being at `server`.
    fn allows(&self, server: Reach, ip: IpAddr) -> bool {
        match reach(ip) {
            Reach::Public => true,
            _ if self.anywhere => true,
            Reach::LinkLocal => false,
            inside => inside == server,
        }
    }

    /// Why a request to `ip` (reached as `what`) is refused.
    fn refusal(&self, what: &str, ip: IpAddr) -> String {
        let refusal = match reach(ip) {
            Reach::LinkLocal => format!(
                "OAuth request to {what} refused: {ip} is a link-local or special address, \
                 where no authorization server lives (`OAuthOptions::allow_any_address` \
                 lifts this)"
            ),
            place => format!(
                "OAuth request to {what} refused: {ip} is a {} address, and the MCP server {} \
                 is not on one (`OAuthOptions::allow_any_address` lifts this)",
                if place == Reach::Loopback {
                    "loopback"
                } else {
                    "private"
                },
                self.server
            ),
        };
        *self
            .last_refusal
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(refusal.clone());
        refusal
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
    /// resolved). The server's reach must be known: [`Self::server_reach`] has run.
    pub(crate) fn check_literal(&self, url: &reqwest::Url) -> Result<(), String> {
        let server = self.server_reach.get().copied().unwrap_or(Reach::Public);
        match literal_host(url) {
            Some(ip) if !self.allows(server, ip) => Err(self.refusal(url.as_str(), ip)),
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
            let server = guard.server_reach().await;
            let host = name.as_str();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|address| guard.allows(server, address.ip()))
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

    #[test]
    fn addresses_are_placed_from_the_internet_inwards() {
        for public in [
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "2606:4700::1111",
        ] {
            assert_eq!(reach(ip(public)), Reach::Public, "{public}");
        }
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            assert_eq!(reach(ip(private)), Reach::Private, "{private}");
        }
        for loopback in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(reach(ip(loopback)), Reach::Loopback, "{loopback}");
        }
        for special in [
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "fe80::1",
            "::",
            "ff02::1",
            "::ffff:169.254.169.254",
        ] {
            assert_eq!(reach(ip(special)), Reach::LinkLocal, "{special}");
        }
    }

    #[tokio::test]
    async fn a_public_server_may_not_send_the_client_inside() {
        let guard = ReachGuard::new("https://203.0.113.7/mcp", false);
        assert_eq!(guard.server_reach().await, Reach::Public);
        for inside in [
            "http://127.0.0.1:8080/token",
            "http://10.0.0.5/.well-known/oauth-authorization-server",
            "http://[::1]/token",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let error = guard
                .check_literal(&reqwest::Url::parse(inside).unwrap())
                .expect_err(inside);
            assert!(error.contains("refused"), "{error}");
        }
        assert!(
            guard
                .check_literal(&reqwest::Url::parse("https://8.8.8.8/token").unwrap())
                .is_ok()
        );
        // Names are refused when they resolve inside.
        let refused = GuardedResolver(Arc::clone(&guard))
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .expect("localhost is refused")
            .to_string();
        assert!(refused.contains("localhost"), "{refused}");
    }

    #[tokio::test]
    async fn a_server_on_this_machine_may_use_it_but_not_other_networks() {
        let guard = ReachGuard::new("http://localhost:3000/mcp", false);
        assert_eq!(guard.server_reach().await, Reach::Loopback);
        let url = |text: &str| reqwest::Url::parse(text).unwrap();
        assert!(
            guard
                .check_literal(&url("http://127.0.0.1:9000/token"))
                .is_ok()
        );
        assert!(guard.check_literal(&url("https://8.8.8.8/token")).is_ok());
        let error = guard
            .check_literal(&url("http://192.168.0.9/token"))
            .expect_err("the private network is another place");
        assert!(error.contains("private address"), "{error}");
        assert!(error.contains("localhost:3000"), "{error}");
        let error = guard
            .check_literal(&url("http://169.254.169.254/latest/meta-data/"))
            .expect_err("link-local is refused");
        assert!(error.contains("link-local"), "{error}");
        let unspecified = ReachGuard::new("http://0.0.0.0:3000/mcp", false);
        assert_eq!(unspecified.server_reach().await, Reach::Loopback);
        let private = ReachGuard::new("http://10.0.0.2/mcp", false);
        assert_eq!(private.server_reach().await, Reach::Private);
        assert!(private.check_literal(&url("http://10.9.9.9/token")).is_ok());
        assert!(
            private
                .check_literal(&url("http://127.0.0.1/token"))
                .is_err()
        );
        assert!(
            GuardedResolver(Arc::clone(&guard))
                .resolve("localhost".parse().unwrap())
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn the_application_may_lift_the_rule() {
        let guard = ReachGuard::new("https://203.0.113.7/mcp", true);
        guard.server_reach().await;
        let metadata = reqwest::Url::parse("http://169.254.169.254/latest/meta-data/").unwrap();
        assert!(guard.check_literal(&metadata).is_ok());
    }
}
