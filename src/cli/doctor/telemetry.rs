//! The telemetry line: whether `toolsmith serve` exports traces and metrics, and where (the
//! standard `OTEL_*` variables, as the server reads them; header values are never shown).

use super::{Check, Status, check};
use crate::config::Config;
use crate::error::Hint;
use crate::telemetry::Settings;
use crate::telemetry::settings::Export;

pub(super) fn telemetry(config: &Config) -> Check {
    let s = Settings::from_env(config.telemetry_content, config.data_dir.clone());
    let line = s.describe();
    match &s.export {
        Export::Off(_) => check("telemetry", Status::Ok, line, None),
        Export::To { .. } => check("telemetry", Status::Ok, line, None),
        Export::Invalid(e) => check("telemetry", Status::Warn, line, e.hint()),
    }
}
