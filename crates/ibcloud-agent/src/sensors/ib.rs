//! Per-VM I/O from InfiniBand counters: the port counters in sysfs
//! (`/sys/class/infiniband/<dev>/ports/<port>/counters`, plus
//! `hw_counters/` where the driver has them), `rdma statistic` output and
//! `perfquery` output. Each source yields cumulative (bytes, packets); the
//! sensor turns them into per-interval deltas, unwrapping counters of the
//! configured width.
//!
//! Units: `port_xmit_data`/`port_rcv_data` and perfquery's `PortXmitData`
//! count 4-byte words (IB spec, PortCounters); they are multiplied by 4.
//! The 32-bit PortCounters *saturate* at 2³²−1 rather than wrap (the spec);
//! a saturated counter is reported as an error telling the operator to use
//! the 64-bit extended counters, since deltas from it would be silently
//! wrong.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which direction counts as the VM's I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Transmitted data (what IBMon's send-CQ scan sees): the default.
    #[default]
    Xmit,
    /// Received data.
    Rcv,
    /// Both.
    Both,
}

/// Cumulative counters read at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Data, in the source's units (4-byte words for port counters and
    /// perfquery, bytes for rdma counters: see [`Source::unit`]).
    pub data: u64,
    /// Packets (or the configured requests counter).
    pub packets: u64,
}

/// Where the counters come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A sysfs counters directory (`.../ports/<p>/counters`); `requests`
    /// names a file relative to the port directory (e.g.
    /// `hw_counters/rx_write_requests`) to count requests instead of
    /// packets.
    Sysfs {
        /// The counters directory.
        dir: PathBuf,
        /// Optional requests counter (relative to the port directory).
        requests: Option<String>,
    },
    /// `rdma statistic show link DEV/PORT` (command and args configurable
    /// so a fixture script can stand in); data from the `counter` fields.
    Rdma {
        /// Command line.
        command: Vec<String>,
        /// Counter name summed as bytes (×1; rdma counters are not words).
        bytes_counter: String,
        /// Counter name for requests.
        requests_counter: String,
    },
    /// `perfquery -x LID PORT` (64-bit extended counters) or plain
    /// `perfquery` (32-bit).
    Perfquery {
        /// Command line.
        command: Vec<String>,
    },
}

fn read_counter(path: &Path) -> Result<u64, String> {
    let s = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "InfiniBand counter {} disappeared (device removed?)",
                path.display()
            )
        } else {
            format!("cannot read InfiniBand counter {}: {e}", path.display())
        }
    })?;
    s.trim()
        .parse()
        .map_err(|_| format!("{}: '{}' is not a counter value", path.display(), s.trim()))
}

fn run(command: &[String]) -> Result<String, String> {
    let (prog, args) = command.split_first().ok_or("empty sensor command")?;
    let out = Command::new(prog)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run '{}': {e}", command.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "'{}' failed ({}): {}",
            command.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Source {
    /// Bytes per data unit: 4 for port counters (they count 4-byte words),
    /// 1 for rdma counters.
    pub fn unit(&self) -> u64 {
        match self {
            Source::Rdma { .. } => 1,
            _ => 4,
        }
    }

    /// Reads the cumulative counters now.
    pub fn read(&self, dir: Direction) -> Result<Counts, String> {
        match self {
            Source::Sysfs { dir: d, requests } => {
                let words = match dir {
                    Direction::Xmit => read_counter(&d.join("port_xmit_data"))?,
                    Direction::Rcv => read_counter(&d.join("port_rcv_data"))?,
                    Direction::Both => read_counter(&d.join("port_xmit_data"))?
                        .wrapping_add(read_counter(&d.join("port_rcv_data"))?),
                };
                let packets = match requests {
                    Some(r) => read_counter(&d.parent().unwrap_or(d).join(r))?,
                    None => match dir {
                        Direction::Xmit => read_counter(&d.join("port_xmit_packets"))?,
                        Direction::Rcv => read_counter(&d.join("port_rcv_packets"))?,
                        Direction::Both => read_counter(&d.join("port_xmit_packets"))?
                            .wrapping_add(read_counter(&d.join("port_rcv_packets"))?),
                    },
                };
                Ok(Counts {
                    data: words,
                    packets,
                })
            }
            Source::Rdma {
                command,
                bytes_counter,
                requests_counter,
            } => {
                let text = run(command)?;
                let recs = parse_rdma_statistic(&text)?;
                let sum = |k: &str| -> Result<u64, String> {
                    let mut found = false;
                    let mut s = 0u64;
                    for r in &recs {
                        if let Some(v) = r.counters.get(k) {
                            found = true;
                            s = s.wrapping_add(*v);
                        }
                    }
                    found.then_some(s).ok_or_else(|| {
                        format!("'{}' output has no counter '{k}'", command.join(" "))
                    })
                };
                Ok(Counts {
                    data: sum(bytes_counter)?,
                    packets: sum(requests_counter)?,
                })
            }
            Source::Perfquery { command } => {
                let text = run(command)?;
                let f = parse_perfquery(&text)?;
                let get = |k: &str| {
                    f.get(k)
                        .copied()
                        .ok_or_else(|| format!("'{}' output has no {k}", command.join(" ")))
                };
                let (data, pkts) = match dir {
                    Direction::Xmit => (get("PortXmitData")?, get("PortXmitPkts")?),
                    Direction::Rcv => (get("PortRcvData")?, get("PortRcvPkts")?),
                    Direction::Both => (
                        get("PortXmitData")?.wrapping_add(get("PortRcvData")?),
                        get("PortXmitPkts")?.wrapping_add(get("PortRcvPkts")?),
                    ),
                };
                Ok(Counts {
                    data,
                    packets: pkts,
                })
            }
        }
    }
}

/// The increase of a `bits`-wide counter from `old` to `new`, assuming at
/// most one wrap in between. A 32-bit counter stuck at its maximum is
/// saturated (PortCounters do not wrap) → error.
///
/// ```
/// use ibcloud_agent::sensors::ib::delta;
/// assert_eq!(delta(10, 25, 64), Ok(15));
/// assert_eq!(delta(u32::MAX as u64 - 1, 3, 32), Ok(5));
/// ```
pub fn delta(old: u64, new: u64, bits: u32) -> Result<u64, String> {
    if bits == 32 && new == u32::MAX as u64 {
        return Err(
            "32-bit InfiniBand counter saturated at 2^32-1; use the 64-bit extended counters \
                    (sysfs on a recent kernel, perfquery -x, counter-bits = 64) or reset it"
                .into(),
        );
    }
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    Ok(new.wrapping_sub(old) & mask)
}

/// One record of `rdma statistic` output: the link (`dev/port`), the
/// textual attributes and the numeric counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RdmaRecord {
    /// `mlx5_0/1`.
    pub link: String,
    /// Non-numeric attributes (`qp-type RC`, `comm ib_send_bw`, …).
    pub attrs: BTreeMap<String, String>,
    /// Counters.
    pub counters: BTreeMap<String, u64>,
}

/// Parses `rdma statistic [qp] show` text: each record starts with
/// `link DEV/PORT` followed by `name value` pairs; continuation lines
/// (indented, e.g. `LQPN: <…>`) belong to the previous record and are
/// kept as attributes. Errors name the line.
pub fn parse_rdma_statistic(text: &str) -> Result<Vec<RdmaRecord>, String> {
    let mut out: Vec<RdmaRecord> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let mut toks = t.split_whitespace().peekable();
        if line.starts_with("link ") {
            let link = toks.nth(1).ok_or(format!(
                "rdma statistic line {lineno}: 'link' without DEV/PORT"
            ))?;
            if !link.contains('/') {
                return Err(format!(
                    "rdma statistic line {lineno}: link '{link}' is not DEV/PORT"
                ));
            }
            out.push(RdmaRecord {
                link: link.to_string(),
                ..Default::default()
            });
        } else if out.is_empty() {
            return Err(format!(
                "rdma statistic line {lineno}: expected 'link DEV/PORT ...', got '{t}'"
            ));
        }
        let rec = out.last_mut().expect("a record was pushed");
        while let Some(k) = toks.next() {
            let k = k.trim_end_matches(':');
            let Some(v) = toks.next() else {
                return Err(format!("rdma statistic line {lineno}: '{k}' has no value"));
            };
            match v.parse::<u64>() {
                Ok(n)
                    if !k.eq_ignore_ascii_case("pid")
                        && !k.eq_ignore_ascii_case("cntn")
                        && k != "LQPN" =>
                {
                    rec.counters.insert(k.to_string(), n);
                }
                _ => {
                    rec.attrs.insert(k.to_string(), v.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// Parses `perfquery` output (`Name:.....value` lines; the `#` header and
/// unknown lines are skipped; values may be hex `0x…`). Errors name the
/// line of a field whose value does not parse.
pub fn parse_perfquery(text: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((k, rest)) = t.split_once(':') else {
            continue;
        };
        let v = rest.trim_start_matches('.').trim();
        if k.is_empty() || k.contains(char::is_whitespace) {
            continue;
        }
        let n = if let Some(h) = v.strip_prefix("0x") {
            u64::from_str_radix(h, 16)
        } else {
            v.parse()
        }
        .map_err(|_| {
            format!(
                "perfquery line {}: {k} has value '{v}', not a number",
                i + 1
            )
        })?;
        out.insert(k.to_string(), n);
    }
    if out.is_empty() {
        return Err("perfquery output has no counters".into());
    }
    Ok(out)
}

/// One VM's IB sensor: a source plus its previous reading.
#[derive(Clone, Debug)]
pub struct IbSensor {
    /// Where to read.
    pub source: Source,
    /// Direction counted.
    pub direction: Direction,
    /// Counter width (32 or 64).
    pub bits: u32,
    last: Option<Counts>,
}

impl IbSensor {
    /// A sensor with no previous reading.
    pub fn new(source: Source, direction: Direction, bits: u32) -> Self {
        Self {
            source,
            direction,
            bits,
            last: None,
        }
    }

    /// Reads the counters; returns (bytes, packets) since the previous
    /// call (zero on the first).
    pub fn sample(&mut self) -> Result<(u64, u64), String> {
        let now = self.source.read(self.direction)?;
        let d = match self.last {
            None => (0, 0),
            Some(old) => (
                // unwrap in the counter's own units, then scale to bytes
                delta(old.data, now.data, self.bits)?.saturating_mul(self.source.unit()),
                delta(old.packets, now.packets, self.bits)?,
            ),
        };
        self.last = Some(now);
        Ok(d)
    }
}
