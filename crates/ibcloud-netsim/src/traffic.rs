//! Traffic: the specification users write (JSON, or the compact CLI form
//! `uniform:load=0.5,size=4096`), trace files, and their resolution against
//! a fabric into the flows the engine runs. Every name is checked here, so
//! a bad spec fails before the run starts.
//!
//! A *flow* is one queue pair: a source endpoint, a destination rule (one
//! endpoint, uniform random, hot-spot mix, all-to-all, or a trace), an SL,
//! a message-size distribution and an arrival process (greedy, constant
//! rate, Poisson, on/off).

use crate::config::SimConfig;
use crate::error::NetsimError;
use crate::time::{parse_duration, Time};
use crate::topo::{Net, NONE};
use ibcloud_fabric::Fabric;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The whole traffic of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrafficSpec {
    /// Pattern generators, each expanding to one flow per source endpoint.
    pub patterns: Vec<PatternSpec>,
    /// Individual flows.
    pub flows: Vec<FlowSpec>,
    /// Messages replayed from a trace (one flow per source endpoint).
    pub trace: Vec<TraceRow>,
}

/// One flow (queue pair).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct FlowSpec {
    /// Name in the results (default `SRC->DST`).
    pub name: Option<String>,
    /// Source endpoint: node description (or its first word), `lid:N`, a GUID
    /// `0x…` or `#index`.
    pub src: String,
    /// Destination endpoint (as `src`), or `uniform` (random per message),
    /// or `all` (all-to-all: every other endpoint in turn).
    pub dst: String,
    /// Hot-spot endpoints: a `hotspot-fraction` of the messages go to one of
    /// them (uniformly), the rest follow `dst`.
    pub hotspot: Vec<String>,
    /// Share of messages sent to the hot-spots.
    pub hotspot_fraction: f64,
    /// Service level (0–15).
    pub sl: u8,
    /// Message size in bytes (default 65536).
    pub size: Option<u32>,
    /// Uniform size range `[min, max]` instead of `size`.
    pub size_range: Option<(u32, u32)>,
    /// Empirical sizes `[[bytes, weight], …]` instead of `size`.
    pub sizes: Vec<(u32, f64)>,
    /// Offered load as a fraction of the source link's payload capacity.
    pub load: Option<f64>,
    /// Offered payload rate in Gb/s (instead of `load`); neither: greedy
    /// (always a message waiting, like perftest).
    pub gbps: Option<f64>,
    /// Exponential instead of constant gaps between messages.
    pub poisson: bool,
    /// On/off source: send for `on`, pause for `off` (durations like `1ms`).
    pub on: Option<String>,
    /// See `on`.
    pub off: Option<String>,
    /// Start time (default 0).
    pub start: Option<String>,
    /// Stop time (default: end of run).
    pub stop: Option<String>,
    /// Messages that may wait at the source; further offered messages are
    /// refused and counted (default 64; greedy flows keep 2).
    pub max_backlog: Option<u32>,
}

/// A pattern over all endpoints (or `sources`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct PatternSpec {
    /// `uniform`, `shift`, `permutation`, `hotspot`, `alltoall`.
    pub kind: String,
    /// Offered load per source (fraction of its link); for `hotspot`
    /// without `fraction`, the aggregate load on the hot node (1.5 = 150 %).
    pub load: Option<f64>,
    /// Message size (default 4096).
    pub size: Option<u32>,
    /// Shift distance for `shift` (default 1).
    pub shift: Option<u32>,
    /// Hot-spot endpoints for `hotspot` (or a mix with `uniform`).
    pub hot: Vec<String>,
    /// With `hot`: share of each source's messages that go to the hot-spots
    /// (the rest uniform). Without it, `hotspot` sends everything to `hot`.
    pub fraction: Option<f64>,
    /// Service level.
    pub sl: u8,
    /// Exponential gaps.
    pub poisson: bool,
    /// Start time.
    pub start: Option<String>,
    /// Stop time.
    pub stop: Option<String>,
    /// Sources (default: every endpoint; the hot-spots themselves are left
    /// out of `hotspot`).
    pub sources: Vec<String>,
    /// Messages that may wait at each source, over all its VLs; further
    /// offered messages are refused and counted (default 64).
    pub max_backlog: Option<u32>,
}

/// One message of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRow {
    /// Time the message is posted, in picoseconds.
    pub time: Time,
    /// Source endpoint.
    pub src: String,
    /// Destination endpoint.
    pub dst: String,
    /// Bytes.
    pub bytes: u32,
    /// Service level.
    #[serde(default)]
    pub sl: u8,
}

/// Reads a trace in CSV: `time,src,dst,bytes[,sl]` with time as a duration
/// (`12us`) or seconds; a header line and `#` comments are skipped.
///
/// ```
/// use ibcloud_netsim::traffic::parse_trace_csv;
/// let rows = parse_trace_csv("time,src,dst,bytes\n1us,H1,H2,4096\n", "t.csv").unwrap();
/// assert_eq!(rows[0].time, 1_000_000);
/// assert!(parse_trace_csv("1us,H1,H2\n", "t.csv").unwrap_err().to_string().contains("t.csv:1"));
/// ```
pub fn parse_trace_csv(text: &str, file: &str) -> Result<Vec<TraceRow>, NetsimError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{file}:{}", i + 1);
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || (i == 0 && l.starts_with("time")) {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() < 4 || f.len() > 5 {
            return Err(NetsimError::Traffic {
                at: at(),
                problem: format!("expected time,src,dst,bytes[,sl], found {} fields", f.len()),
            });
        }
        let time = parse_duration(f[0]).map_err(|e| NetsimError::Traffic {
            at: at(),
            problem: e.to_string(),
        })?;
        let bytes: u32 =
            f[3].parse()
                .ok()
                .filter(|&b| b > 0)
                .ok_or_else(|| NetsimError::Traffic {
                    at: at(),
                    problem: format!("bytes '{}' is not a positive integer", f[3]),
                })?;
        let sl: u8 = match f.get(4) {
            Some(s) => s
                .parse()
                .ok()
                .filter(|&s| s < 16)
                .ok_or_else(|| NetsimError::Traffic {
                    at: at(),
                    problem: format!("SL '{s}' is not 0-15"),
                })?,
            None => 0,
        };
        rows.push(TraceRow {
            time,
            src: f[1].into(),
            dst: f[2].into(),
            bytes,
            sl,
        });
    }
    Ok(rows)
}

impl TrafficSpec {
    /// Parses the compact form: patterns or flows separated by `;`, each
    /// `KIND:key=value,key=value`. Kinds: the pattern kinds, and `flow`
    /// (keys of [`FlowSpec`]). Lists (hot-spots, sources) use `|`.
    ///
    /// ```
    /// use ibcloud_netsim::traffic::TrafficSpec;
    /// let t = TrafficSpec::parse_compact("uniform:load=0.5,size=4096").unwrap();
    /// assert_eq!(t.patterns[0].load, Some(0.5));
    /// let t = TrafficSpec::parse_compact("flow:src=H1,dst=H5;hotspot:hot=H3,load=1.5").unwrap();
    /// assert_eq!((t.flows.len(), t.patterns.len()), (1, 1));
    /// assert!(TrafficSpec::parse_compact("uniform:lod=0.5").is_err());
    /// ```
    pub fn parse_compact(text: &str) -> Result<Self, NetsimError> {
        let mut spec = TrafficSpec::default();
        let whole = text.trim();
        let pathlike = [".json", ".csv", ".txt"]
            .iter()
            .any(|e| whole.to_ascii_lowercase().ends_with(e))
            || whole.contains('/');
        if pathlike && !whole.contains([';', ',', '=']) {
            return Err(NetsimError::Traffic {
                at: whole.into(),
                problem: format!(
                    "traffic file '{whole}' not found (or not readable); a spec is \
                     KIND:key=value,... or a .json/.csv file"
                ),
            });
        }
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (kind, rest) = part.split_once(':').unwrap_or((part, ""));
            let kind = kind.trim();
            let mut obj = serde_json::Map::new();
            for kv in rest.split(',').map(str::trim).filter(|k| !k.is_empty()) {
                let (k, v) = kv.split_once('=').ok_or_else(|| NetsimError::Traffic {
                    at: part.into(),
                    problem: format!("'{kv}' is not key=value"),
                })?;
                let k = k.trim().replace('_', "-");
                let v = v.trim();
                let value = match k.as_str() {
                    "hot" | "sources" | "hotspot" => serde_json::Value::Array(
                        v.split('|')
                            .map(|s| serde_json::Value::String(s.into()))
                            .collect(),
                    ),
                    "src" | "dst" | "name" | "start" | "stop" | "on" | "off" => {
                        serde_json::Value::String(v.into())
                    }
                    "poisson" => serde_json::Value::Bool(matches!(v, "1" | "true" | "yes")),
                    "size-range" => {
                        let (a, b) = v.split_once('-').ok_or_else(|| NetsimError::Traffic {
                            at: part.into(),
                            problem: "size-range is MIN-MAX".into(),
                        })?;
                        serde_json::json!([json_num(num(a, part)?), json_num(num(b, part)?)])
                    }
                    _ => json_num(num(v, part)?),
                };
                obj.insert(k, value);
            }
            let bad = |e: serde_json::Error| NetsimError::Traffic {
                at: part.into(),
                problem: e.to_string(),
            };
            if kind == "flow" {
                spec.flows
                    .push(serde_json::from_value(serde_json::Value::Object(obj)).map_err(bad)?);
            } else {
                obj.insert("kind".into(), serde_json::Value::String(kind.into()));
                let p: PatternSpec =
                    serde_json::from_value(serde_json::Value::Object(obj)).map_err(bad)?;
                spec.patterns.push(p);
            }
        }
        if spec.patterns.is_empty() && spec.flows.is_empty() {
            return Err(NetsimError::Traffic {
                at: text.into(),
                problem: "no patterns or flows".into(),
            });
        }
        Ok(spec)
    }

    /// Parses JSON (the serde form of this struct).
    pub fn from_json(text: &str) -> Result<Self, NetsimError> {
        serde_json::from_str(text).map_err(|e| NetsimError::Traffic {
            at: format!("line {}", e.line()),
            problem: e.to_string(),
        })
    }
}

/// The largest offered load accepted: a source (or, for `hotspot`, the hot
/// nodes together) offered more than 16× its link only fills its backlog
/// and burns events; a greedy source (no load) is the way to saturate.
pub const MAX_LOAD: f64 = 16.0;

fn check_load(load: f64, at: &str) -> Result<f64, NetsimError> {
    if !(load > 0.0 && load <= MAX_LOAD) {
        return Err(NetsimError::Traffic {
            at: at.into(),
            problem: format!(
                "load {load} must be positive and at most {MAX_LOAD} (a fraction of \
                 the link; leave load out for a greedy source)"
            ),
        });
    }
    Ok(load)
}

fn json_num(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && (0.0..1e15).contains(&x) {
        serde_json::Value::from(x as u64)
    } else {
        serde_json::Value::from(x)
    }
}

fn num(v: &str, part: &str) -> Result<f64, NetsimError> {
    let v = v.trim();
    let (digits, mult) = match v.chars().last() {
        Some('k' | 'K') => (&v[..v.len() - 1], 1024.0),
        Some('m' | 'M') => (&v[..v.len() - 1], 1024.0 * 1024.0),
        _ => (v, 1.0),
    };
    let x = digits
        .parse::<f64>()
        .map(|x| x * mult)
        .map_err(|_| NetsimError::Traffic {
            at: part.into(),
            problem: format!("'{v}' is not a number"),
        })?;
    if !x.is_finite() {
        // serde_json would turn NaN and infinity into null, i.e. "not given".
        return Err(NetsimError::Traffic {
            at: part.into(),
            problem: format!("'{v}' is not a finite number"),
        });
    }
    Ok(x)
}

/// Where a flow's messages go.
#[derive(Clone, Debug)]
pub(crate) enum Dst {
    Fixed(u32),
    Uniform,
    AllToAll,
    Trace,
}

/// Message sizes.
#[derive(Clone, Debug)]
pub(crate) enum Size {
    Fixed(u32),
    Range(u32, u32),
    Choice(Vec<(u32, f64)>),
}

/// When messages are posted.
#[derive(Clone, Debug)]
pub(crate) enum Arrival {
    Greedy,
    /// Mean gap in ps (f64), Poisson or constant, optional on/off periods.
    Rate {
        gap: f64,
        poisson: bool,
        on_off: Option<(Time, Time)>,
    },
    Trace(Vec<(Time, u32, u32, u8)>),
}

/// A resolved flow.
#[derive(Clone, Debug)]
pub(crate) struct FlowDef {
    pub(crate) name: String,
    pub(crate) src: u32,
    pub(crate) dst: Dst,
    pub(crate) hot: Vec<u32>,
    pub(crate) hot_fraction: f64,
    pub(crate) sl: u8,
    pub(crate) size: Size,
    pub(crate) arrival: Arrival,
    pub(crate) start: Time,
    pub(crate) stop: Time,
    pub(crate) max_backlog: u32,
    /// Start rate-driven sources at a random point of their first gap
    /// (patterns), so that many equal sources do not post in lockstep.
    pub(crate) random_phase: bool,
}

impl Size {
    pub(crate) fn mean(&self) -> f64 {
        match self {
            Size::Fixed(s) => *s as f64,
            Size::Range(a, b) => (*a as f64 + *b as f64) / 2.0,
            Size::Choice(c) => {
                let w: f64 = c.iter().map(|x| x.1).sum();
                c.iter().map(|x| x.0 as f64 * x.1).sum::<f64>() / w
            }
        }
    }

    pub(crate) fn draw(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            Size::Fixed(s) => *s,
            Size::Range(a, b) => rng.random_range(*a..=*b),
            Size::Choice(c) => {
                let w: f64 = c.iter().map(|x| x.1).sum();
                let mut x = rng.random::<f64>() * w;
                for &(s, wt) in c {
                    if x < wt {
                        return s;
                    }
                    x -= wt;
                }
                c[c.len() - 1].0
            }
        }
    }
}

fn dur(text: &Option<String>, default: Time, at: &str) -> Result<Time, NetsimError> {
    match text {
        None => Ok(default),
        Some(t) => parse_duration(t).map_err(|e| NetsimError::Traffic {
            at: at.into(),
            problem: e.to_string(),
        }),
    }
}

/// Resolves a spec into flows; `end` is the run's end time.
pub(crate) fn resolve(
    spec: &TrafficSpec,
    fabric: &Fabric,
    net: &Net,
    cfg: &SimConfig,
    end: Time,
) -> Result<Vec<FlowDef>, NetsimError> {
    let mut flows = Vec::new();
    let ep = |name: &str, at: &str| -> Result<u32, NetsimError> {
        net.resolve(fabric, name).ok_or_else(|| NetsimError::Traffic {
            at: at.into(),
            problem: format!("unknown endpoint '{name}' (give a CA node description, lid:N, a GUID 0x… or #index)"),
        })
    };
    let payload_gbps = |src: u32, load: f64| {
        let kbps = net.slots[net.ep_slot[src as usize] as usize].kbps as f64;
        let eff = cfg.mtu as f64 / cfg.wire_bytes(cfg.mtu) as f64;
        load * kbps / 1e6 * eff
    };
    let neps = net.num_eps() as u32;
    if neps < 2 {
        return Err(NetsimError::Traffic {
            at: "fabric".into(),
            problem: "fewer than two connected CA ports with LIDs".into(),
        });
    }
    for (i, f) in spec.flows.iter().enumerate() {
        let at = format!("flow {i}");
        let src = ep(&f.src, &at)?;
        let dst = match f.dst.as_str() {
            "uniform" => Dst::Uniform,
            "all" => Dst::AllToAll,
            "" if !f.hotspot.is_empty() => Dst::Uniform,
            d => Dst::Fixed(ep(d, &at)?),
        };
        if let Dst::Fixed(d) = dst {
            if d == src {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "source and destination are the same port".into(),
                });
            }
        }
        let hot = f
            .hotspot
            .iter()
            .map(|h| ep(h, &at))
            .collect::<Result<Vec<_>, _>>()?;
        if !(0.0..=1.0).contains(&f.hotspot_fraction)
            || (!hot.is_empty() && f.hotspot_fraction == 0.0 && f.dst.is_empty())
        {
            return Err(NetsimError::Traffic {
                at,
                problem: "hotspot-fraction must be in (0, 1] with hot-spots".into(),
            });
        }
        let size = if !f.sizes.is_empty() {
            if f.sizes
                .iter()
                .any(|s| s.0 == 0 || s.1.is_nan() || s.1 < 0.0)
                || f.sizes.iter().map(|s| s.1).sum::<f64>() <= 0.0
            {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "sizes need positive bytes and weights".into(),
                });
            }
            Size::Choice(f.sizes.clone())
        } else if let Some((a, b)) = f.size_range {
            if a == 0 || a > b {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "size-range needs 0 < min <= max".into(),
                });
            }
            Size::Range(a, b)
        } else {
            Size::Fixed(positive_size(f.size.unwrap_or(65536), &at)?)
        };
        let rate = match (f.load, f.gbps) {
            (Some(l), None) => Some(payload_gbps(src, check_load(l, &at)?)),
            (None, Some(g)) => {
                let cap = payload_gbps(src, MAX_LOAD);
                if !(g > 0.0 && g <= cap) {
                    return Err(NetsimError::Traffic {
                        at,
                        problem: format!(
                            "gbps {g} must be positive and at most {cap:.1} \
                             ({MAX_LOAD}× the source link); leave out load and gbps \
                             for a greedy source"
                        ),
                    });
                }
                Some(g)
            }
            (None, None) => None,
            _ => {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "give load or gbps, not both".into(),
                })
            }
        };
        let on_off = match (&f.on, &f.off) {
            (Some(_), Some(_)) => Some((dur(&f.on, 0, &at)?, dur(&f.off, 0, &at)?)),
            (None, None) => None,
            _ => {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "on and off go together".into(),
                })
            }
        };
        let arrival = match rate {
            None if on_off.is_none() => Arrival::Greedy,
            None => Arrival::Rate {
                gap: gap(size.mean(), payload_gbps(src, 1.0), &at)?,
                poisson: f.poisson,
                on_off,
            },
            Some(g) => Arrival::Rate {
                gap: gap(size.mean(), g, &at)?,
                poisson: f.poisson,
                on_off,
            },
        };
        if f.sl > 15 {
            return Err(NetsimError::Traffic {
                at,
                problem: format!("SL {} is not 0-15", f.sl),
            });
        }
        let name = f.name.clone().unwrap_or_else(|| {
            format!(
                "{}->{}",
                net.ep_name(src),
                if f.dst.is_empty() {
                    "hotspot".into()
                } else {
                    f.dst.clone()
                }
            )
        });
        let greedy = matches!(arrival, Arrival::Greedy);
        flows.push(FlowDef {
            name,
            src,
            dst,
            hot,
            hot_fraction: f.hotspot_fraction,
            sl: f.sl,
            size,
            arrival,
            start: dur(&f.start, 0, &at)?,
            stop: dur(&f.stop, end, &at)?,
            max_backlog: f.max_backlog.unwrap_or(if greedy { 2 } else { 64 }).max(1),
            random_phase: false,
        });
    }
    for (i, p) in spec.patterns.iter().enumerate() {
        let at = format!("pattern {i} ({})", p.kind);
        let size = Size::Fixed(positive_size(p.size.unwrap_or(4096), &at)?);
        let start = dur(&p.start, 0, &at)?;
        let stop = dur(&p.stop, end, &at)?;
        let hot = p
            .hot
            .iter()
            .map(|h| ep(h, &at))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sources: Vec<u32> = if p.sources.is_empty() {
            (0..neps).collect()
        } else {
            p.sources
                .iter()
                .map(|s| ep(s, &at))
                .collect::<Result<Vec<_>, _>>()?
        };
        // `hotspot` without a fraction gives the hot nodes' aggregate load,
        // spread over the senders: what is bounded is each sender's share
        // (checked below), so the aggregate itself may exceed MAX_LOAD.
        let aggregate = p.kind == "hotspot" && p.fraction.is_none();
        let load = match p.load.unwrap_or(0.5) {
            l if aggregate && l.is_finite() && l > 0.0 => l,
            l => check_load(l, &at)?,
        };
        let mut mk = |src: u32,
                      dst: Dst,
                      hot: Vec<u32>,
                      frac: f64,
                      gbps: f64,
                      name: String|
         -> Result<(), NetsimError> {
            flows.push(FlowDef {
                name,
                src,
                dst,
                hot,
                hot_fraction: frac,
                sl: p.sl,
                size: size.clone(),
                arrival: Arrival::Rate {
                    gap: gap(size.mean(), gbps, &at)?,
                    poisson: p.poisson,
                    on_off: None,
                },
                start,
                stop,
                max_backlog: p.max_backlog.unwrap_or(64).max(1),
                random_phase: true,
            });
            Ok(())
        };
        match p.kind.as_str() {
            "uniform" => {
                let frac = p
                    .fraction
                    .unwrap_or(if hot.is_empty() { 0.0 } else { 0.05 });
                for &s in &sources {
                    mk(
                        s,
                        Dst::Uniform,
                        hot.clone(),
                        frac,
                        payload_gbps(s, load),
                        format!("{}->uniform", net.ep_name(s)),
                    )?;
                }
            }
            "shift" | "permutation" => {
                let n = sources.len() as u32;
                let perm: Vec<u32> = if p.kind == "shift" {
                    let k = p.shift.unwrap_or(1) % n.max(1);
                    if k == 0 {
                        return Err(NetsimError::Traffic {
                            at,
                            problem: "shift distance is a multiple of the endpoint count".into(),
                        });
                    }
                    (0..n).map(|i| (i + k) % n).collect()
                } else {
                    derangement(n, cfg.seed ^ 0x9e37_79b9_7f4a_7c15 ^ i as u64)
                };
                for (i, &s) in sources.iter().enumerate() {
                    let d = sources[perm[i] as usize];
                    mk(
                        s,
                        Dst::Fixed(d),
                        Vec::new(),
                        0.0,
                        payload_gbps(s, load),
                        format!("{}->{}", net.ep_name(s), net.ep_name(d)),
                    )?;
                }
            }
            "alltoall" => {
                for &s in &sources {
                    mk(
                        s,
                        Dst::AllToAll,
                        Vec::new(),
                        0.0,
                        payload_gbps(s, load),
                        format!("{}->all", net.ep_name(s)),
                    )?;
                }
            }
            "hotspot" => {
                if hot.is_empty() {
                    return Err(NetsimError::Traffic {
                        at,
                        problem: "hotspot needs hot=NODE[|NODE…]".into(),
                    });
                }
                sources.retain(|s| !hot.contains(s));
                if let Some(frac) = p.fraction {
                    for &s in &sources {
                        mk(
                            s,
                            Dst::Uniform,
                            hot.clone(),
                            frac,
                            payload_gbps(s, load),
                            format!("{}->uniform+hot", net.ep_name(s)),
                        )?;
                    }
                } else {
                    // Aggregate `load` × the hot nodes' capacity, spread over the senders.
                    let cap: f64 = hot.iter().map(|&h| payload_gbps(h, 1.0)).sum();
                    let each = load * cap / sources.len().max(1) as f64;
                    for &s in &sources {
                        if each > payload_gbps(s, MAX_LOAD) {
                            return Err(NetsimError::Traffic {
                                at,
                                problem: format!(
                                    "load {load} offers each of the {} senders more than \
                                     {MAX_LOAD}× its link; lower it (or leave load out for \
                                     greedy senders)",
                                    sources.len()
                                ),
                            });
                        }
                        let d = if hot.len() == 1 {
                            Dst::Fixed(hot[0])
                        } else {
                            Dst::Uniform
                        };
                        let (hv, fr) = if hot.len() == 1 {
                            (Vec::new(), 0.0)
                        } else {
                            (hot.clone(), 1.0)
                        };
                        mk(s, d, hv, fr, each, format!("{}->hot", net.ep_name(s)))?;
                    }
                }
            }
            k => {
                return Err(NetsimError::Traffic {
                    at,
                    problem: format!(
                        "unknown pattern '{k}' (uniform, shift, permutation, hotspot, alltoall)"
                    ),
                })
            }
        }
    }
    if !spec.trace.is_empty() {
        let mut per_src: Vec<Vec<(Time, u32, u32, u8)>> = vec![Vec::new(); neps as usize];
        for (i, r) in spec.trace.iter().enumerate() {
            let at = format!("trace row {}", i + 1);
            let s = ep(&r.src, &at)?;
            let d = ep(&r.dst, &at)?;
            if s == d || r.bytes == 0 || r.sl > 15 {
                return Err(NetsimError::Traffic {
                    at,
                    problem: "a message needs two different endpoints, bytes > 0 and SL 0-15"
                        .into(),
                });
            }
            per_src[s as usize].push((r.time, d, r.bytes, r.sl));
        }
        for (s, mut rows) in per_src.into_iter().enumerate() {
            if rows.is_empty() {
                continue;
            }
            rows.sort_by_key(|r| r.0);
            flows.push(FlowDef {
                name: format!("{}->trace", net.ep_name(s as u32)),
                src: s as u32,
                dst: Dst::Trace,
                hot: Vec::new(),
                hot_fraction: 0.0,
                sl: rows[0].3,
                size: Size::Fixed(rows[0].2),
                arrival: Arrival::Trace(rows),
                start: 0,
                stop: end,
                max_backlog: u32::MAX,
                random_phase: false,
            });
        }
    }
    if flows.is_empty() {
        return Err(NetsimError::Traffic {
            at: "spec".into(),
            problem: "no flows".into(),
        });
    }
    // Every destination a flow can pick must be routable. Pairs are walked
    // once each; sources that may pick any destination are checked together
    // (linear in the destinations per entry switch, see
    // `Net::first_unroutable_to_all`).
    let no_route = |s: u32, d: u32| -> NetsimError {
        let why = net.walk(s, d).err().unwrap_or_else(|| "unroutable".into());
        NetsimError::NoRoute {
            src: net.ep_name(s),
            dst: format!("{} (LID {})", net.ep_name(d), net.ep_lid[d as usize]),
            why,
        }
    };
    let mut checked = std::collections::HashSet::new();
    let mut check = |s: u32, d: u32| -> Result<(), NetsimError> {
        if s == d || !checked.insert((s, d)) {
            return Ok(());
        }
        net.walk(s, d).map(|_| ()).map_err(|_| no_route(s, d))
    };
    let mut to_all = Vec::new();
    let mut to_all_seen = vec![false; neps as usize];
    for f in &flows {
        match &f.dst {
            Dst::Fixed(d) => check(f.src, *d)?,
            Dst::Uniform | Dst::AllToAll => {
                let only_hot = matches!(f.dst, Dst::Uniform) && f.hot_fraction >= 1.0;
                if !only_hot && !to_all_seen[f.src as usize] {
                    to_all_seen[f.src as usize] = true;
                    to_all.push(f.src);
                }
            }
            Dst::Trace => {
                if let Arrival::Trace(rows) = &f.arrival {
                    for r in rows {
                        check(f.src, r.1)?;
                    }
                }
            }
        }
        for &h in &f.hot {
            check(f.src, h)?;
        }
    }
    if let Some((s, d)) = net.first_unroutable_to_all(&to_all) {
        return Err(no_route(s, d));
    }
    let _ = NONE;
    Ok(flows)
}

fn positive_size(s: u32, at: &str) -> Result<u32, NetsimError> {
    if s == 0 {
        return Err(NetsimError::Traffic {
            at: at.into(),
            problem: "message size must be positive".into(),
        });
    }
    Ok(s)
}

fn gap(mean_bytes: f64, gbps: f64, at: &str) -> Result<f64, NetsimError> {
    if !(gbps > 0.0 && gbps.is_finite()) {
        return Err(NetsimError::Traffic {
            at: at.into(),
            problem: format!("rate {gbps} Gb/s must be positive"),
        });
    }
    // ps per message = bytes * 8 / (Gb/s) * 1000.
    Ok(mean_bytes * 8.0 * 1000.0 / gbps)
}

/// A seeded permutation without fixed points (Sattolo's algorithm).
fn derangement(n: u32, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..n as usize).rev() {
        let j = rng.random_range(0..i);
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sattolo_has_no_fixed_points() {
        let p = derangement(17, 3);
        assert!(p.iter().enumerate().all(|(i, &d)| i as u32 != d));
        let mut s = p.clone();
        s.sort();
        assert_eq!(s, (0..17).collect::<Vec<_>>());
    }

    #[test]
    fn compact_form_round_trips_keys() {
        let t =
            TrafficSpec::parse_compact("flow:src=A,dst=B,size=64k,start=1ms,load=0.3,poisson=true")
                .unwrap();
        assert_eq!(t.flows[0].size, Some(65536));
        assert_eq!(t.flows[0].start.as_deref(), Some("1ms"));
        assert!(t.flows[0].poisson);
        assert!(TrafficSpec::parse_compact("").is_err());
        assert!(TrafficSpec::parse_compact("uniform:load").is_err());
        assert!(TrafficSpec::parse_compact("uniform:load=abc").is_err());
        let t = TrafficSpec::parse_compact("uniform:hot=H1|H2,fraction=0.05").unwrap();
        assert_eq!(t.patterns[0].hot, vec!["H1", "H2"]);
        let t = TrafficSpec::parse_compact("uniform:load=0.5,max-backlog=1000").unwrap();
        assert_eq!(t.patterns[0].max_backlog, Some(1000));
    }

    #[test]
    fn non_finite_numbers_and_missing_files_are_named() {
        for v in ["nan", "NaN", "inf", "-inf", "infinity"] {
            let e = TrafficSpec::parse_compact(&format!("uniform:load={v}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("not a finite number"), "{v}: {e}");
        }
        for f in ["traffic.json", "/tmp/no/such.csv", "dir/spec.txt"] {
            let e = TrafficSpec::parse_compact(f).unwrap_err().to_string();
            assert!(e.contains("not found") && e.contains(f), "{e}");
        }
        assert!(check_load(1000.0, "x")
            .unwrap_err()
            .to_string()
            .contains("at most 16"));
        assert!(check_load(1e9, "x").is_err());
        assert!(check_load(0.0, "x").is_err());
        assert_eq!(check_load(1.5, "x").unwrap(), 1.5);
    }

    /// Property: any text gives a spec or an error, never a panic.
    #[test]
    fn parse_compact_never_panics() {
        use rand::{Rng, SeedableRng};
        let alphabet: Vec<char> = "uniform:hotspotflow=,;|-.0123456789eEnaikKmM#/ _sizeload"
            .chars()
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        for _ in 0..20_000 {
            let n = rng.random_range(0..40);
            let text: String = (0..n)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            let _ = TrafficSpec::parse_compact(&text);
        }
    }
}
