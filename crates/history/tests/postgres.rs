//! The PostgreSQL store against a real server that this test starts: initdb into a temporary
//! folder, the server listening on a Unix socket there only (no TCP port), stopped at the end. As
//! root it runs as the `postgres` (else `nobody`) user, as PostgreSQL requires. Where no server
//! can be started (no initdb), the test says so on standard error — `postgres: skipped: …` — and
//! passes; `postgres: tested against …` says it ran. `LAUNCHGUARD_TEST_POSTGRES=URL` uses a
//! server of your own instead (a database is created and dropped in it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use launchguard_history::schema;
use launchguard_history::store::postgres::PostgresStore;
use launchguard_history::store::{self, Location, Mode, Store};

/// A server started for the test; stopped when dropped.
struct Server {
    _dir: tempfile::TempDir,
    data: PathBuf,
    socket: PathBuf,
    bin: PathBuf,
    user: Option<String>,
    version: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.run("pg_ctl", &["-D", self.data.to_str().unwrap(), "-m", "immediate", "stop"]);
    }
}

impl Server {
    fn run(&self, tool: &str, args: &[&str]) -> Result<String, String> {
        run_as(self.user.as_deref(), &self.bin.join(tool), args)
    }

    fn url(&self, db: &str) -> String {
        // The socket folder as the host, percent-encoded, as libpq's URLs take it.
        let host: String = self
            .socket
            .to_str()
            .unwrap()
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        format!("postgresql://postgres@{host}/{db}")
    }
}

fn run_as(user: Option<&str>, tool: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--"]).arg(tool);
            c
        }
        None => Command::new(tool),
    };
    let out = cmd.args(args).output().map_err(|e| format!("{}: {e}", tool.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {}: {}",
            tool.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The folder of initdb, pg_ctl and postgres: on PATH, or Debian's /usr/lib/postgresql/N/bin.
fn bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file());
    if let Some(d) = on_path {
        // A symbolic link to initdb (Debian's /usr/local/bin) names the folder postgres is in.
        return std::fs::canonicalize(d.join("initdb")).ok().and_then(|p| p.parent().map(Path::to_path_buf));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop()
}

fn start() -> Result<Server, String> {
    let bin = bin_dir().ok_or("no initdb on PATH nor in /usr/lib/postgresql/*/bin")?;
    let root = run_as(None, Path::new("id"), &["-u"]).map(|s| s.trim() == "0").unwrap_or(false);
    let user = if root {
        let known = |u: &str| Command::new("id").arg(u).output().is_ok_and(|o| o.status.success());
        Some(
            ["postgres", "nobody"]
                .into_iter()
                .find(|u| known(u))
                .ok_or("running as root, and no postgres or nobody user")?
                .to_string(),
        )
    } else {
        None
    };
    let dir = tempfile::Builder::new().prefix("lg-pg").tempdir_in("/tmp").map_err(|e| e.to_string())?;
    let (data, socket) = (dir.path().join("data"), dir.path().to_path_buf());
    if let Some(u) = &user {
        run_as(None, Path::new("chown"), &["-R", u, dir.path().to_str().unwrap()])?;
    }
    let mut server = Server { data, socket, bin, user, version: String::new(), _dir: dir };
    server.run(
        "initdb",
        &["-D", server.data.to_str().unwrap(), "-A", "trust", "-U", "postgres", "--no-sync"],
    )?;
    let opts = format!("-k {} -c listen_addresses='' -c fsync=off", server.socket.display());
    let log = server.socket.join("log");
    server.run(
        "pg_ctl",
        &["-D", server.data.to_str().unwrap(), "-o", &opts, "-l", log.to_str().unwrap(), "-w", "start"],
    )?;
    server.version = server.run("postgres", &["--version"]).unwrap_or_default().trim().to_string();
    Ok(server)
}

#[test]
fn postgres_store_against_a_real_server() {
    let (server, base) = match std::env::var("LAUNCHGUARD_TEST_POSTGRES") {
        Ok(url) => (None, url),
        Err(_) => match start() {
            Ok(s) => {
                let url = s.url("postgres");
                (Some(s), url)
            }
            Err(why) => {
                eprintln!("postgres: skipped: no server could be started here ({why})");
                return;
            }
        },
    };
    let mut admin = postgres::Client::connect(&base, postgres::NoTls).expect("connect to the test server");
    let db = format!("lg_history_test_{}", std::process::id());
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {db}")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let url = match &server {
        Some(s) => s.url(&db),
        None => base.replacen(base.rsplit('/').next().unwrap_or(""), &db, 1),
    };

    // Through `--history`'s parsing, as the command line opens it.
    assert_eq!(Location::parse(&url), Location::Postgres(url.clone()));
    let mut s = store::open(&Location::parse(&url), Mode::Create).unwrap();
    common::exercise(s.as_mut());

    // A second runner connecting sees the same history; the schema is migrated once.
    let mut other = PostgresStore::connect(&url).unwrap();
    assert_eq!(other.series().unwrap()[0].1, 17);
    assert_eq!(other.schema_version().unwrap(), schema::latest());
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let applied: i64 = c.query_one("SELECT COUNT(*) FROM lg_schema", &[]).unwrap().get(0);
    assert_eq!(applied, schema::latest());

    // Runners starting together migrate under the lock, without error.
    let fresh = format!("{db}_b");
    admin.batch_execute(&format!("CREATE DATABASE {fresh}")).unwrap();
    let fresh_url = url.replacen(&db, &fresh, 1);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let u = fresh_url.clone();
            std::thread::spawn(move || PostgresStore::connect(&u).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }

    // A database from a newer launchguard is refused.
    c.execute("INSERT INTO lg_schema VALUES (99, 'from the future', 'later')", &[]).unwrap();
    let e = PostgresStore::connect(&url).err().unwrap().to_string();
    assert!(e.contains("newer launchguard"), "{e}");

    drop((s, other, c));
    admin.batch_execute(&format!("DROP DATABASE {db}")).unwrap();
    admin.batch_execute(&format!("DROP DATABASE {fresh}")).unwrap();
    match &server {
        Some(sv) => eprintln!("postgres: tested against a real server ({}, started by the test)", sv.version),
        None => eprintln!("postgres: tested against the server of LAUNCHGUARD_TEST_POSTGRES"),
    }
}

#[test]
fn a_bad_connection_string_is_one_line() {
    let e =
        PostgresStore::connect("postgresql://nobody@%2Fnonexistent-socket-dir/x").err().unwrap().to_string();
    assert!(e.contains("cannot connect") && !e.contains('\n'), "{e}");
}
