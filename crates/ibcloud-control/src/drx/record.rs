//! DRX's logs: every control action as a flat record (G §10.3: violation,
//! DCCR, δP, rel, price, δC, cap, MAD pushes, with times), the
//! violation-to-cap time of each violation (G R5), and the hardware pushes.
//! All derive `Serialize` with flat fields, ready for CSV or Parquet.

use crate::Time;
use serde::Serialize;

/// What a record is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordKind {
    /// An HA detected an SLA violation.
    #[default]
    Violation,
    /// The PM raised a price (Eq. 6).
    Price,
    /// The price hit MaxPrice: minimum allocation, frozen.
    Ceiling,
    /// A raise skipped: the price is frozen.
    Frozen,
    /// A raise skipped: already changed this interval.
    AlreadyChanged,
    /// The PM froze a VME that fell to IOmin.
    FreezeIoMin,
    /// An HA applied a cap.
    Cap,
    /// Epoch boundary: prices or caps reset (A8).
    EpochReset,
    /// Slow restore step (A8 option).
    Restore,
    /// The PM asked the SM to push a hardware setting.
    Hardware,
    /// A pushed hardware setting is in force on the fabric.
    HardwareInForce,
}

/// One control action.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DrxRecord {
    /// When (ps).
    pub time: Time,
    /// What.
    pub kind: RecordKind,
    /// Violation event it answers.
    pub event: Option<u64>,
    /// Host.
    pub host: Option<usize>,
    /// VM.
    pub vm: Option<usize>,
    /// VME.
    pub vme: Option<usize>,
    /// Observed I/O (CQEs/s).
    pub io: Option<f64>,
    /// Performance degradation (fraction).
    pub pd: Option<f64>,
    /// δP.
    pub dp: Option<f64>,
    /// Δp/p.
    pub rel: Option<f64>,
    /// Price after (Resos per CQE).
    pub price: Option<f64>,
    /// δC.
    pub dc: Option<f64>,
    /// Cap after (% of one CPU).
    pub cap: Option<f64>,
}

impl DrxRecord {
    /// A record of `kind` at `time`, other fields empty.
    pub fn at(time: Time, kind: RecordKind) -> Self {
        Self {
            time,
            kind,
            ..Default::default()
        }
    }
}

/// One violation's path from detection to the last cap it caused (G R5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Response {
    /// Event id.
    pub event: u64,
    /// Victim VM.
    pub vm: usize,
    /// Its host.
    pub host: usize,
    /// PD (fraction).
    pub pd: f64,
    /// Detection at the HA (ps).
    pub detected: Time,
    /// Arrival at the PM (ps).
    pub pm_received: Option<Time>,
    /// Caps applied (or hardware settings in force) for it.
    pub actions: usize,
    /// First of them (ps).
    pub first_applied: Option<Time>,
    /// Last of them (ps).
    pub last_applied: Option<Time>,
}

impl Response {
    /// Violation-to-cap time: detection to the last action (ps), if any.
    pub fn latency(&self) -> Option<Time> {
        self.last_applied.map(|t| t - self.detected)
    }

    pub(crate) fn applied(&mut self, t: Time) {
        self.actions += 1;
        self.first_applied.get_or_insert(t);
        self.last_applied = Some(self.last_applied.map_or(t, |x| x.max(t)));
    }
}

/// Opaque hardware settings: the actual IB CC (G Table 5) and QoS (G Table
/// 6) values come from the QoS/CC crate; DRX only says which and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HardwareSetting {
    /// IB congestion control with G Table 5's values on the controlled SLs.
    CongestionControl,
    /// QoS SL0→VL0, SL1→VL1, VL weights 32:32 (StMax, DRXMax).
    QosEqual,
    /// QoS SL0→VL0, SL1→VL1, VL weights 254:1 (StMaxQ, DRXMaxQ).
    QosPriority,
}

/// How the SM carried a push out (from the host simulator's SM model).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SmTiming {
    /// Congestion-control MADs.
    pub cc_mads: usize,
    /// QoS MADs.
    pub qos_mads: usize,
    /// SM restart (ps; QoS only).
    pub restart: Time,
    /// How much earlier than `applied` the first port's MAD arrived (ps).
    pub spread: Time,
}

/// A setting pushed by the PM to the SM, which sends it as MADs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HardwareAction {
    /// When the PM decided (ps).
    pub issued: Time,
    /// When the request reaches the SM (issued + PM processing + the PM → SM
    /// message latency; the issue time for static settings).
    pub sent: Time,
    /// When it is in force on the fabric: the SM model's time (SM restart
    /// for QoS, then the MADs) when one runs, else `sent` + `mad-latency`.
    /// QoS applies only to QPs created afterwards (G §3.3).
    pub applied: Time,
    /// The SM's account of the push, when an SM model carried it out.
    pub sm: Option<SmTiming>,
    /// Which.
    pub setting: HardwareSetting,
    /// Violation that triggered it (DRXMax/DRXMaxQ), none when static.
    pub event: Option<u64>,
}

/// A cap the driver wants applied now.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CapCommand {
    /// When (ps).
    pub time: Time,
    /// VM.
    pub vm: usize,
    /// Cap (% of one CPU; ≥ 100 = unlimited).
    pub cap: f64,
}
