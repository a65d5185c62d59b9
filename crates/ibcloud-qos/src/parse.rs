//! Policy files (TOML). Every error names the file, the line and the problem.
//!
//! ```toml
//! preset = "stmaxq"        # optional base: stmax, stmaxq, drxmax, drxmaxq
//! cc-sls = "all"           # with a preset: SLs that get CC, "all" or "bulk" (G §9 A11)
//!
//! [qos]                    # the qos_* options (defaults: the preset's, else OpenSM's)
//! max-vls = 2
//! high-limit = 0
//! vlarb-high = []          # [[VL, weight], …] or "VL:weight,…"
//! vlarb-low = [[0, 254], [1, 1]]
//! sl2vl = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
//!
//! [qos.ca]                 # per port class: ca, sw0, swe, rtr (same keys)
//! high-limit = 4
//!
//! [cc]
//! cc-key = 0
//! max-outstanding-mads = 500
//! cct = "0:0,0:129,…"      # or [[shift, multiplier], …]; CCTI_Limit = entries - 1
//! ccti-limit = 127         # optional: checked against the table
//!
//! [cc.switch]
//! control-map = 0x15
//! victim-mask = "all"      # "none", "all" or [port, …]
//! credit-mask = "none"
//! threshold = 15
//! packet-size = 8          # 64-byte credits
//! credit-starvation-threshold = 0
//! credit-starvation-return-delay = "0:0"
//! marking-rate = 10
//!
//! [cc.ca]
//! port-control = "sl"      # "sl" or "qp"
//! control-map = 0x3        # SL bit mask
//! ccti-timer = 32767       # these four apply to every SL of control-map …
//! ccti-increase = 10
//! trigger-threshold = 100
//! ccti-min = 10
//! [[cc.ca.sl]]             # … unless an SL entry overrides them
//! sl = 1
//! ccti-increase = 20
//! ```

use crate::model::{
    check_cct, check_cct_entry, check_max_vls, check_nibble, CaCongestion, CaCongestionEntry,
    FabricCc, FabricQos, Policy, PortClass, PortMask, QosOverride, QosTables, SwitchCongestion,
};
use crate::preset::{CcSls, Preset};
use ibcloud_netsim::{CctEntry, VlArbEntry};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// A policy file that cannot be used: `file:line: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QosError {
    /// The file (as given).
    pub file: String,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for QosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

impl std::error::Error for QosError {}

type SInt = Option<Spanned<i64>>;
type SVal = Option<Spanned<toml::Value>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawFile {
    preset: Option<Spanned<String>>,
    cc_sls: Option<Spanned<String>>,
    qos: Option<Spanned<RawQos>>,
    cc: Option<Spanned<RawCc>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawClass {
    max_vls: SInt,
    high_limit: SInt,
    vlarb_high: SVal,
    vlarb_low: SVal,
    sl2vl: Option<Spanned<Vec<i64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawQos {
    max_vls: SInt,
    high_limit: SInt,
    vlarb_high: SVal,
    vlarb_low: SVal,
    sl2vl: Option<Spanned<Vec<i64>>>,
    ca: Option<Spanned<RawClass>>,
    sw0: Option<Spanned<RawClass>>,
    swe: Option<Spanned<RawClass>>,
    rtr: Option<Spanned<RawClass>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCc {
    cc_key: SVal,
    max_outstanding_mads: SInt,
    cct: SVal,
    ccti_limit: SInt,
    switch: Option<Spanned<RawSwitch>>,
    ca: Option<Spanned<RawCa>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSwitch {
    control_map: SInt,
    victim_mask: SVal,
    credit_mask: SVal,
    threshold: SInt,
    packet_size: SInt,
    credit_starvation_threshold: SInt,
    credit_starvation_return_delay: SVal,
    marking_rate: SInt,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawEntry {
    sl: Option<Spanned<i64>>,
    ccti_timer: SInt,
    ccti_increase: SInt,
    trigger_threshold: SInt,
    ccti_min: SInt,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCa {
    port_control: Option<Spanned<String>>,
    control_map: SInt,
    ccti_timer: SInt,
    ccti_increase: SInt,
    trigger_threshold: SInt,
    ccti_min: SInt,
    sl: Option<Vec<Spanned<RawEntry>>>,
}

/// Line (1-based) of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Ctx<'a> {
    file: String,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, problem: impl Into<String>) -> QosError {
        QosError {
            file: self.file.clone(),
            line: Some(line_of(self.text, span.start)),
            problem: problem.into(),
        }
    }

    fn plain(&self, problem: impl Into<String>) -> QosError {
        QosError {
            file: self.file.clone(),
            line: None,
            problem: problem.into(),
        }
    }

    /// An integer in `lo..=hi`.
    fn int(&self, v: &Spanned<i64>, key: &str, lo: i64, hi: i64) -> Result<i64, QosError> {
        let x = *v.get_ref();
        if x < lo || x > hi {
            return Err(self.err(v.span(), format!("{key} = {x}: must be {lo}-{hi}")));
        }
        Ok(x)
    }
}

/// Parses `VL:weight,…` or `[[VL, weight], …]`; VLs 0-14 and weights 0-255
/// are checked here, the rest by [`check_vlarb`].
fn vlarb_table(cx: &Ctx, v: &Spanned<toml::Value>, key: &str) -> Result<Vec<VlArbEntry>, QosError> {
    let pairs = pairs(cx, v, key, "VL:weight")?;
    let mut out = Vec::with_capacity(pairs.len());
    for (i, (vl, w)) in pairs.into_iter().enumerate() {
        if !(0..=14).contains(&vl) {
            return Err(cx.err(
                v.span(),
                format!(
                    "{key} entry {} names VL {vl}: data VLs are 0-14 (VL15 is never arbitrated)",
                    i + 1
                ),
            ));
        }
        if !(0..=255).contains(&w) {
            return Err(cx.err(
                v.span(),
                format!(
                    "{key} entry {} (VL {vl}) has weight {w}: weights are 0-255 (64-byte units)",
                    i + 1
                ),
            ));
        }
        out.push(VlArbEntry {
            vl: vl as u8,
            weight: w as u8,
        });
    }
    if out.len() > crate::model::MAX_VLARB_ENTRIES {
        return Err(cx.err(
            v.span(),
            format!("{key}: {} entries, but a VL arbitration table holds at most 64 (two 32-entry blocks)", out.len()),
        ));
    }
    Ok(out)
}

/// `a:b,c:d` text or an array of two-integer arrays (or `"a:b"` strings).
fn pairs(
    cx: &Ctx,
    v: &Spanned<toml::Value>,
    key: &str,
    what: &str,
) -> Result<Vec<(i64, i64)>, QosError> {
    let bad = |m: String| cx.err(v.span(), format!("{key}: {m}"));
    let one_text = |s: &str| -> Result<(i64, i64), QosError> {
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| bad(format!("'{s}' is not {what}")))?;
        let num = |t: &str| {
            parse_int(t.trim()).ok_or_else(|| bad(format!("'{s}' is not {what} (integers)")))
        };
        Ok((num(a)?, num(b)?))
    };
    match v.get_ref() {
        toml::Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(one_text)
            .collect(),
        toml::Value::Array(items) => items
            .iter()
            .map(|it| match it {
                toml::Value::String(s) => one_text(s),
                toml::Value::Array(p) => match p.as_slice() {
                    [toml::Value::Integer(a), toml::Value::Integer(b)] => Ok((*a, *b)),
                    _ => Err(bad(format!(
                        "each entry must be [{}] (two integers)",
                        what.replace(':', ", ")
                    ))),
                },
                _ => Err(bad(format!(
                    "each entry must be [{}] or \"{what}\"",
                    what.replace(':', ", ")
                ))),
            })
            .collect(),
        _ => Err(bad(format!(
            "expected \"{what},…\" or an array of [{}]",
            what.replace(':', ", ")
        ))),
    }
}

/// A value as the user wrote it (roughly), for messages.
fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("\"{s}\""),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) => "an array".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

fn parse_int(t: &str) -> Option<i64> {
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else {
        t.parse().ok()
    }
}

fn cct_entry(
    cx: &Ctx,
    s: i64,
    m: i64,
    v: &Spanned<toml::Value>,
    key: &str,
) -> Result<CctEntry, QosError> {
    if !(0..=3).contains(&s) || !(0..=16_383).contains(&m) {
        return Err(cx.err(
            v.span(),
            format!("{key}: shift {s} multiplier {m}: CCT_Shift is 0-3 (2 bits) and CCT_Multiplier 0-16383 (14 bits)"),
        ));
    }
    let e = CctEntry {
        shift: s as u8,
        multiplier: m as u16,
    };
    check_cct_entry(e).map_err(|p| cx.err(v.span(), format!("{key}: {p}")))?;
    Ok(e)
}

fn sl2vl(cx: &Ctx, v: &Spanned<Vec<i64>>, key: &str) -> Result<[u8; 16], QosError> {
    let l = v.get_ref();
    if l.len() != 16 {
        return Err(cx.err(
            v.span(),
            format!(
                "{key} has {} entries: it maps each of the 16 SLs to a VL",
                l.len()
            ),
        ));
    }
    let mut out = [0u8; 16];
    for (sl, &vl) in l.iter().enumerate() {
        if !(0..=15).contains(&vl) {
            return Err(cx.err(
                v.span(),
                format!("{key}: SL {sl} maps to VL {vl}: VLs are 0-14, or 15 to drop"),
            ));
        }
        out[sl] = vl as u8;
    }
    Ok(out)
}

fn class(cx: &Ctx, r: &RawClass, prefix: &str) -> Result<QosOverride, QosError> {
    let k = |f: &str| format!("{prefix}.{f}");
    Ok(QosOverride {
        max_vls: match &r.max_vls {
            Some(v) => Some(
                check_max_vls(*v.get_ref())
                    .map_err(|m| cx.err(v.span(), format!("{} = {m}", k("max-vls"))))?,
            ),
            None => None,
        },
        high_limit: match &r.high_limit {
            Some(v) => Some(cx.int(v, &k("high-limit"), 0, 255)? as u8),
            None => None,
        },
        vlarb_high: r
            .vlarb_high
            .as_ref()
            .map(|v| vlarb_table(cx, v, &k("vlarb-high")))
            .transpose()?,
        vlarb_low: r
            .vlarb_low
            .as_ref()
            .map(|v| vlarb_table(cx, v, &k("vlarb-low")))
            .transpose()?,
        sl2vl: r
            .sl2vl
            .as_ref()
            .map(|v| sl2vl(cx, v, &k("sl2vl")))
            .transpose()?,
    })
}

/// Applies an override onto tables.
fn apply(t: &mut QosTables, o: &QosOverride) {
    if let Some(v) = o.max_vls {
        t.max_vls = v;
    }
    if let Some(v) = o.high_limit {
        t.high_limit = v;
    }
    if let Some(v) = &o.vlarb_high {
        t.vlarb_high = v.clone();
    }
    if let Some(v) = &o.vlarb_low {
        t.vlarb_low = v.clone();
    }
    if let Some(v) = o.sl2vl {
        t.sl2vl = v;
    }
}

/// Merges one class's override onto another (fields of `o` win).
fn merge(base: &mut QosOverride, o: QosOverride) {
    base.max_vls = o.max_vls.or(base.max_vls);
    base.high_limit = o.high_limit.or(base.high_limit);
    base.vlarb_high = o.vlarb_high.or(base.vlarb_high.take());
    base.vlarb_low = o.vlarb_low.or(base.vlarb_low.take());
    base.sl2vl = o.sl2vl.or(base.sl2vl);
}

fn qos(cx: &Ctx, raw: &Spanned<RawQos>, base: Option<FabricQos>) -> Result<FabricQos, QosError> {
    let r = raw.get_ref();
    let mut q = base.unwrap_or_else(|| FabricQos::uniform(QosTables::opensm_default()));
    let dflt = class(
        cx,
        &RawClass {
            max_vls: r.max_vls.clone(),
            high_limit: r.high_limit.clone(),
            vlarb_high: r.vlarb_high.clone(),
            vlarb_low: r.vlarb_low.clone(),
            sl2vl: r.sl2vl.clone(),
        },
        "qos",
    )?;
    apply(&mut q.default, &dflt);
    let dflt_raw = RawClass {
        max_vls: r.max_vls.clone(),
        high_limit: r.high_limit.clone(),
        vlarb_high: r.vlarb_high.clone(),
        vlarb_low: r.vlarb_low.clone(),
        sl2vl: r.sl2vl.clone(),
    };
    // Where each (class, field) was written, to put a check's error on the
    // line of the key that caused it.
    let mut spans: Vec<(Option<PortClass>, &'static str, Range<usize>)> = Vec::new();
    field_spans(&dflt_raw, None, raw.span(), &mut spans);
    for (c, rc) in [
        (PortClass::Ca, &r.ca),
        (PortClass::Sw0, &r.sw0),
        (PortClass::Swe, &r.swe),
        (PortClass::Rtr, &r.rtr),
    ] {
        if let Some(rc) = rc {
            let o = class(cx, rc.get_ref(), &format!("qos.{}", c.names().1))?;
            merge(q.class_mut(c), o);
            field_spans(rc.get_ref(), Some(c), rc.span(), &mut spans);
        }
    }
    q.validate().map_err(|(c, f, m)| {
        let find = |cls: Option<PortClass>, field: &str| {
            spans
                .iter()
                .find(|(sc, sf, _)| *sc == cls && *sf == field)
                .map(|(_, _, s)| s.clone())
        };
        // The key itself, else the key a class inherited, else the VL count
        // that makes it wrong, else the table header.
        let span = find(c, f)
            .or_else(|| find(None, f))
            .or_else(|| find(c, "max-vls"))
            .or_else(|| find(None, "max-vls"))
            .or_else(|| find(c, ""))
            .or_else(|| find(None, ""))
            .unwrap_or(0..0);
        let who = c.map_or("qos".to_string(), |c| format!("qos.{}", c.names().1));
        cx.err(span, format!("{who}.{f}: {m}"))
    })?;
    Ok(q)
}

fn field_spans(
    r: &RawClass,
    c: Option<PortClass>,
    table: Range<usize>,
    out: &mut Vec<(Option<PortClass>, &'static str, Range<usize>)>,
) {
    out.push((c, "", table));
    if let Some(v) = &r.max_vls {
        out.push((c, "max-vls", v.span()));
    }
    if let Some(v) = &r.vlarb_high {
        out.push((c, "vlarb-high", v.span()));
    }
    if let Some(v) = &r.vlarb_low {
        out.push((c, "vlarb-low", v.span()));
    }
    if let Some(v) = &r.sl2vl {
        out.push((c, "sl2vl", v.span()));
    }
}

fn mask(cx: &Ctx, v: &Spanned<toml::Value>, key: &str) -> Result<PortMask, QosError> {
    match v.get_ref() {
        toml::Value::String(s) if s.eq_ignore_ascii_case("none") => Ok(PortMask::None),
        toml::Value::String(s) if s.eq_ignore_ascii_case("all") => Ok(PortMask::All),
        toml::Value::Array(items) => {
            let mut ports = Vec::new();
            for it in items {
                match it {
                    toml::Value::Integer(p) if (0..=254).contains(p) => ports.push(*p as u8),
                    other => {
                        return Err(cx.err(
                            v.span(),
                            format!(
                                "{key}: {} is not a switch port 0-254 (bit 255 is reserved)",
                                show(other)
                            ),
                        ))
                    }
                }
            }
            ports.sort_unstable();
            ports.dedup();
            Ok(PortMask::Ports(ports))
        }
        other => Err(cx.err(
            v.span(),
            format!(
                "{key} = {}: expected \"none\", \"all\" or a list of ports",
                show(other)
            ),
        )),
    }
}

fn cc_defaults() -> FabricCc {
    FabricCc {
        cc_key: 0,
        max_outstanding_mads: 500,
        switch: SwitchCongestion {
            control_map: 0,
            victim_mask: PortMask::None,
            credit_mask: PortMask::None,
            threshold: 0,
            packet_size: 0,
            cs_threshold: 0,
            cs_return_delay: CctEntry::default(),
            marking_rate: 0,
        },
        ca: CaCongestion {
            sl_based: false,
            control_map: 0,
            entries: [CaCongestionEntry::default(); 16],
        },
        cct: Vec::new(),
    }
}

fn entry_fields(
    cx: &Ctx,
    e: &mut CaCongestionEntry,
    r: &RawEntry,
    prefix: &str,
) -> Result<(), QosError> {
    if let Some(v) = &r.ccti_timer {
        e.ccti_timer = cx.int(v, &format!("{prefix}ccti-timer"), 0, 65_535)? as u16;
    }
    if let Some(v) = &r.ccti_increase {
        e.ccti_increase = cx.int(v, &format!("{prefix}ccti-increase"), 0, 255)? as u8;
    }
    if let Some(v) = &r.trigger_threshold {
        e.trigger_threshold = cx.int(v, &format!("{prefix}trigger-threshold"), 0, 255)? as u8;
    }
    if let Some(v) = &r.ccti_min {
        e.ccti_min = cx.int(v, &format!("{prefix}ccti-min"), 0, 255)? as u8;
    }
    Ok(())
}

fn cc(cx: &Ctx, raw: &Spanned<RawCc>, base: Option<FabricCc>) -> Result<FabricCc, QosError> {
    let r = raw.get_ref();
    let mut c = base.unwrap_or_else(cc_defaults);
    if let Some(v) = &r.cc_key {
        c.cc_key = match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => *i as u64,
            toml::Value::String(s) => s
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    cx.err(
                        v.span(),
                        format!("cc.cc-key = '{s}': expected a 64-bit hex key 0x…"),
                    )
                })?,
            other => {
                return Err(cx.err(
                    v.span(),
                    format!(
                        "cc.cc-key = {}: expected a non-negative integer or \"0x…\"",
                        show(other)
                    ),
                ))
            }
        };
    }
    if let Some(v) = &r.max_outstanding_mads {
        c.max_outstanding_mads = cx.int(v, "cc.max-outstanding-mads", 1, u32::MAX as i64)? as u32;
    }
    if let Some(v) = &r.cct {
        let ps = pairs(cx, v, "cc.cct", "shift:multiplier")?;
        let mut t = Vec::with_capacity(ps.len());
        for (i, (s, m)) in ps.into_iter().enumerate() {
            t.push(cct_entry(cx, s, m, v, &format!("cc.cct entry {i}"))?);
        }
        check_cct(&t).map_err(|m| cx.err(v.span(), format!("cc.cct: {m}")))?;
        c.cct = t;
    }
    if let Some(sw) = &r.switch {
        let s = sw.get_ref();
        let d = &mut c.switch;
        if let Some(v) = &s.control_map {
            d.control_map = cx.int(v, "cc.switch.control-map", 0, 0x1F)? as u32;
        }
        if let Some(v) = &s.victim_mask {
            d.victim_mask = mask(cx, v, "cc.switch.victim-mask")?;
        }
        if let Some(v) = &s.credit_mask {
            d.credit_mask = mask(cx, v, "cc.switch.credit-mask")?;
        }
        if let Some(v) = &s.threshold {
            d.threshold = check_nibble(*v.get_ref())
                .map_err(|m| cx.err(v.span(), format!("cc.switch.threshold = {m}")))?;
        }
        if let Some(v) = &s.packet_size {
            d.packet_size = cx.int(v, "cc.switch.packet-size (64-byte credits)", 0, 255)? as u8;
        }
        if let Some(v) = &s.credit_starvation_threshold {
            d.cs_threshold = check_nibble(*v.get_ref()).map_err(|m| {
                cx.err(
                    v.span(),
                    format!("cc.switch.credit-starvation-threshold = {m}"),
                )
            })?;
        }
        if let Some(v) = &s.credit_starvation_return_delay {
            let key = "cc.switch.credit-starvation-return-delay";
            let (sh, mu) = match v.get_ref() {
                toml::Value::Array(a) => match a.as_slice() {
                    [toml::Value::Integer(x), toml::Value::Integer(y)] => (*x, *y),
                    _ => {
                        return Err(cx.err(
                            v.span(),
                            format!("{key}: expected [shift, multiplier] or \"shift:multiplier\""),
                        ))
                    }
                },
                _ => match pairs(cx, v, key, "shift:multiplier")?.as_slice() {
                    [p] => *p,
                    _ => {
                        return Err(
                            cx.err(v.span(), format!("{key}: expected one shift:multiplier"))
                        )
                    }
                },
            };
            d.cs_return_delay = cct_entry(cx, sh, mu, v, key)?;
        }
        if let Some(v) = &s.marking_rate {
            d.marking_rate = cx.int(v, "cc.switch.marking-rate", 0, 65_535)? as u16;
        }
    }
    if let Some(ca) = &r.ca {
        let a = ca.get_ref();
        if let Some(v) = &a.port_control {
            c.ca.sl_based = match v.get_ref().to_ascii_lowercase().as_str() {
                "sl" => true,
                "qp" => false,
                o => {
                    return Err(cx.err(
                        v.span(),
                        format!("cc.ca.port-control = '{o}': expected \"sl\" or \"qp\""),
                    ))
                }
            };
        }
        if let Some(v) = &a.control_map {
            c.ca.control_map = cx.int(v, "cc.ca.control-map (SL bit mask)", 0, 0xFFFF)? as u16;
        }
        let common = RawEntry {
            sl: None,
            ccti_timer: a.ccti_timer.clone(),
            ccti_increase: a.ccti_increase.clone(),
            trigger_threshold: a.trigger_threshold.clone(),
            ccti_min: a.ccti_min.clone(),
        };
        for sl in 0..16 {
            if c.ca.control_map & (1 << sl) != 0 {
                entry_fields(cx, &mut c.ca.entries[sl], &common, "cc.ca.")?;
            }
        }
        let mut seen = [false; 16];
        for e in a.sl.iter().flatten() {
            let re = e.get_ref();
            let Some(slv) = &re.sl else {
                return Err(cx.err(e.span(), "[[cc.ca.sl]] needs sl = 0-15"));
            };
            let sl = cx.int(slv, "cc.ca.sl.sl", 0, 15)? as usize;
            if std::mem::replace(&mut seen[sl], true) {
                return Err(cx.err(slv.span(), format!("SL {sl} has two [[cc.ca.sl]] entries")));
            }
            entry_fields(cx, &mut c.ca.entries[sl], re, &format!("cc.ca.sl {sl}: "))?;
        }
    }
    if c.cct.is_empty() {
        return Err(cx.err(
            raw.span(),
            "[cc] needs cct = \"shift:multiplier,…\" (at least one entry)",
        ));
    }
    if let Some(v) = &r.ccti_limit {
        let want = c.ccti_limit() as i64;
        if *v.get_ref() != want {
            return Err(cx.err(
                v.span(),
                format!(
                    "cc.ccti-limit = {}: OpenSM sets CCTI_Limit to the CCT's entries minus one, here {want} ({} entries)",
                    v.get_ref(),
                    c.cct.len()
                ),
            ));
        }
    }
    c.validate()
        .map_err(|(f, m)| cx.err(raw.span(), format!("cc.{f}: {m}")))?;
    Ok(c)
}

/// Parses a policy file's text; `file` names it in errors.
pub fn parse_policy(file: &str, text: &str) -> Result<Policy, QosError> {
    let cx = Ctx {
        file: file.to_string(),
        text,
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| match e.span() {
        Some(s) => cx.err(s, e.message().trim().to_string()),
        None => cx.plain(e.message().trim().to_string()),
    })?;
    let sls = match &raw.cc_sls {
        None => CcSls::default(),
        Some(v) => CcSls::parse(v.get_ref()).ok_or_else(|| {
            cx.err(
                v.span(),
                format!(
                    "cc-sls = '{}': expected \"all\" or \"bulk\" (G §9 A11)",
                    v.get_ref()
                ),
            )
        })?,
    };
    let preset = match &raw.preset {
        None => None,
        Some(v) => Some(Preset::by_name(v.get_ref()).ok_or_else(|| {
            cx.err(
                v.span(),
                format!(
                    "preset = '{}': expected stmax, stmaxq, drxmax or drxmaxq",
                    v.get_ref()
                ),
            )
        })?),
    };
    if preset.is_none() {
        if let Some(v) = &raw.cc_sls {
            return Err(cx.err(
                v.span(),
                "cc-sls applies to a preset's CC values; without preset, set [cc.ca] control-map",
            ));
        }
    }
    let qos = match &raw.qos {
        Some(r) => Some(qos(&cx, r, preset.map(|p| p.qos()))?),
        None => preset.map(|p| p.qos()),
    };
    let cc = match &raw.cc {
        Some(r) => Some(cc(&cx, r, preset.map(|p| p.cc(sls)))?),
        None => preset.map(|p| p.cc(sls)),
    };
    if qos.is_none() && cc.is_none() {
        return Err(cx.plain("nothing to configure: give preset = \"…\", a [qos] or a [cc] table"));
    }
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    Ok(Policy { name, qos, cc })
}

/// Reads and parses a policy file.
pub fn load_policy(path: &Path) -> Result<Policy, QosError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| QosError {
        file: file.clone(),
        line: None,
        problem: format!("cannot read: {e}"),
    })?;
    parse_policy(&file, &text)
}

/// A preset name (`stmax`, …) or a policy file.
pub fn resolve(policy_or_file: &str, sls: CcSls) -> Result<Policy, QosError> {
    if let Some(p) = Preset::by_name(policy_or_file) {
        return Ok(p.policy(sls));
    }
    let path = Path::new(policy_or_file);
    if !path.exists() {
        return Err(QosError {
            file: policy_or_file.to_string(),
            line: None,
            problem: "no such file, and not a preset (stmax, stmaxq, drxmax, drxmaxq)".into(),
        });
    }
    load_policy(path)
}
