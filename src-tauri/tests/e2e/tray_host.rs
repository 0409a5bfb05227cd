//! A stand-in tray host, for the tray test: a private D-Bus session bus, and on it the
//! `org.kde.StatusNotifierWatcher` a desktop's panel runs, which reads a registered item's menu
//! (`com.canonical.dbusmenu`) and clicks its entries exactly as a panel does when the user does.
//!
//! Under Xvfb there is no panel, so the tray process's libayatana-appindicator would find no
//! watcher and fall back to an XEmbed icon nobody can click. With this watcher on its session
//! bus it registers its StatusNotifierItem and exports its menu through libdbusmenu, and the
//! test reaches the menu the way a user's panel does: `GetLayout`, `AboutToShow`, then
//! `Event(id, "clicked", …)`, which dbusmenu-gtk turns into the GTK item's activation.
//!
//! Rust with zbus, in the test's own process, rather than a Python program: zbus is already in
//! the lock (the keychain store uses it), the test reads the menu directly instead of through a
//! second process and a protocol of its own, and nothing needs installing.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::blocking::Connection;
use zbus::blocking::proxy::{Builder as ProxyBuilder, Proxy};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

use crate::driver::{Group, spawn_group};

/// A private session bus (`dbus-daemon` with a configuration of its own: no service
/// activation, so nothing is started on it behind the test's back), killed when dropped.
pub struct Bus {
    /// For `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
    _daemon: Group,
}

impl Bus {
    pub fn start(dir: &Path) -> Bus {
        let config = dir.join("session.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                dir.join("bus").display()
            ),
        )
        .unwrap();
        // Its warnings (as root it cannot raise its file limit here) go to a file, shown only
        // if it does not start.
        let log = dir.join("dbus-daemon.log");
        let mut cmd = Command::new("dbus-daemon");
        cmd.arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut daemon = spawn_group(&mut cmd);
        let mut address = String::new();
        BufReader::new(daemon.0.stdout.take().unwrap()).read_line(&mut address).unwrap();
        let address = address.trim().to_owned();
        assert!(
            address.starts_with("unix:"),
            "dbus-daemon printed no address: {address:?}\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Bus { address, _daemon: daemon }
    }
}

/// The items that registered, as `(bus name, object path)`.
type Registered = Arc<Mutex<Vec<(String, String)>>>;

/// `org.kde.StatusNotifierWatcher`, with a host always registered (this very process). It
/// keeps every item that registered: the test starts one tray and ends it last.
struct Watcher {
    items: Registered,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    /// libayatana-appindicator passes its object path and is known by the sender's name; other
    /// implementations pass a bus name, whose item is at `/StatusNotifierItem`.
    async fn register_status_notifier_item(
        &self,
        service: &str,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let (name, path) = if service.starts_with('/') {
            (sender, service.to_owned())
        } else {
            (service.to_owned(), "/StatusNotifierItem".to_owned())
        };
        let id = format!("{name}{path}");
        self.items.lock().unwrap().push((name, path));
        Self::status_notifier_item_registered(&emitter, &id).await?;
        Ok(())
    }

    fn register_status_notifier_host(&self, _service: &str) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items.lock().unwrap().iter().map(|(n, p)| format!("{n}{p}")).collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_item_unregistered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_host_registered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

/// The watcher and host, owning `org.kde.StatusNotifierWatcher` on a bus.
pub struct Host {
    conn: Connection,
    items: Registered,
}

/// One entry of an exported menu, as a panel shows it.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: i32,
    /// The label as shown: dbusmenu's mnemonic underscores resolved (`__` is `_`).
    pub label: String,
    pub enabled: bool,
    pub visible: bool,
    pub separator: bool,
    pub children: Vec<Item>,
}

impl Item {
    /// The first entry, at any depth, whose label satisfies `pred`.
    pub fn find(&self, pred: &dyn Fn(&str) -> bool) -> Option<&Item> {
        self.children.iter().find_map(|c| if pred(&c.label) { Some(c) } else { c.find(pred) })
    }

    /// The entry labelled exactly `label`, at any depth.
    pub fn labelled(&self, label: &str) -> Option<&Item> {
        self.find(&|l| l == label)
    }

    /// The direct child labelled exactly `label`; panics with the whole menu otherwise.
    pub fn child(&self, label: &str) -> &Item {
        self.children.iter().find(|c| c.label == label).unwrap_or_else(|| {
            panic!("no entry {label:?} under {:?}:\n{}", self.label, self.render())
        })
    }

    /// The menu as indented text, for failure messages.
    pub fn render(&self) -> String {
        fn walk(item: &Item, depth: usize, out: &mut String) {
            for c in &item.children {
                let line = if c.separator { "----".to_owned() } else { c.label.clone() };
                let state = match (c.enabled, c.visible) {
                    (true, true) => "",
                    (false, true) => " [disabled]",
                    (_, false) => " [hidden]",
                };
                out.push_str(&format!("{}{line}{state}\n", "  ".repeat(depth)));
                walk(c, depth + 1, out);
            }
        }
        let mut out = String::new();
        walk(self, 0, &mut out);
        out
    }
}

/// How a panel shows a dbusmenu label: `__` is a literal underscore, any other underscore
/// marks the access key and is not shown.
fn shown(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '_' {
            out.push(c);
        } else if chars.peek() == Some(&'_') {
            chars.next();
            out.push('_');
        }
    }
    out
}

/// A variant's content (dictionary values and `av` elements arrive wrapped).
fn unwrap<'a>(v: &'a Value<'a>) -> &'a Value<'a> {
    match v {
        Value::Value(inner) => inner,
        v => v,
    }
}

/// One `(ia{sv}av)` of a `GetLayout` reply, recursively.
fn parse(v: &Value<'_>) -> Item {
    let Value::Structure(s) = unwrap(v) else { panic!("a dbusmenu entry is not a struct: {v:?}") };
    let [Value::I32(id), Value::Dict(props), Value::Array(children)] = s.fields() else {
        panic!("a dbusmenu entry is not (ia{{sv}}av): {v:?}")
    };
    let props = props.iter().filter_map(|(k, v)| match k {
        Value::Str(k) => Some((k.as_str(), v)),
        _ => None,
    });
    entry(*id, props, children.inner().iter().map(parse).collect())
}

fn entry<'a>(
    id: i32,
    props: impl Iterator<Item = (&'a str, &'a Value<'a>)>,
    children: Vec<Item>,
) -> Item {
    let props: HashMap<&str, &Value<'_>> = props.map(|(k, v)| (k, unwrap(v))).collect();
    let string = |k: &str| match props.get(k) {
        Some(Value::Str(s)) => s.as_str(),
        _ => "",
    };
    // Absent means the default, which the dbusmenu spec makes `true` for both.
    let flag = |k: &str| !matches!(props.get(k), Some(Value::Bool(false)));
    Item {
        id,
        label: shown(string("label")),
        enabled: flag("enabled"),
        visible: flag("visible"),
        separator: string("type") == "separator",
        children,
    }
}

impl Host {
    /// Owns the watcher's name on the bus at `address`.
    pub fn start(address: &str) -> Host {
        let items = Registered::default();
        let conn = zbus::blocking::connection::Builder::address(address)
            .and_then(|b| b.serve_at("/StatusNotifierWatcher", Watcher { items: items.clone() }))
            .and_then(|b| b.name("org.kde.StatusNotifierWatcher"))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("cannot serve the StatusNotifierWatcher: {e}"));
        Host { conn, items }
    }

    /// The item that registered last, once one has (within `within`).
    fn item(&self, within: Duration) -> (String, String) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(item) = self.items.lock().unwrap().last().cloned() {
                return item;
            }
            assert!(
                Instant::now() < deadline,
                "no StatusNotifierItem registered with the watcher within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn proxy(&self, dest: &str, path: &str, iface: &'static str) -> zbus::Result<Proxy<'static>> {
        ProxyBuilder::new(&self.conn)
            .destination(dest.to_owned())?
            .path(path.to_owned())?
            .interface(iface)?
            .cache_properties(CacheProperties::No)
            .build()
    }

    /// The registered item's menu, as `(bus name, menu object path)`.
    fn menu_object(&self, within: Duration) -> zbus::Result<(String, String)> {
        let (name, path) = self.item(within);
        let item = self.proxy(&name, &path, "org.kde.StatusNotifierItem")?;
        let menu: OwnedObjectPath = item.get_property("Menu")?;
        Ok((name, menu.to_string()))
    }

    fn dbusmenu(&self, within: Duration) -> zbus::Result<Proxy<'static>> {
        let (name, path) = self.menu_object(within)?;
        self.proxy(&name, &path, "com.canonical.dbusmenu")
    }

    /// Reads the whole menu, as a panel does when it is about to show it.
    pub fn menu(&self, within: Duration) -> zbus::Result<Item> {
        let menu = self.dbusmenu(within)?;
        // A panel tells the application first: dbusmenu-gtk may update the menu then.
        let _: bool = menu.call("AboutToShow", &(0i32,))?;
        type Entry = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);
        let (_revision, (id, props, children)): (u32, Entry) =
            menu.call("GetLayout", &(0i32, -1i32, Vec::<String>::new()))?;
        let children = children.iter().map(|c| parse(c)).collect();
        Ok(entry(id, props.iter().map(|(k, v)| (k.as_str(), &**v)), children))
    }

    /// Clicks the entry at `path` (labels from the top of `menu`, as last read), as a panel
    /// does when the user opens each submenu on the way and chooses it: `AboutToShow` for each
    /// menu opened, then a `clicked` event. A panel offers no click on a disabled entry, so
    /// neither does this.
    pub fn click(&self, menu: &Item, path: &[&str]) -> zbus::Result<()> {
        let dbusmenu = self.dbusmenu(Duration::ZERO)?;
        let mut at = menu;
        for label in path {
            let _: bool = dbusmenu.call("AboutToShow", &(at.id,))?;
            at = at.child(label);
            assert!(at.enabled && at.visible, "{label:?} cannot be clicked:\n{}", menu.render());
        }
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(0);
        dbusmenu.call::<_, _, ()>("Event", &(at.id, "clicked", Value::I32(0), timestamp))
    }
}
