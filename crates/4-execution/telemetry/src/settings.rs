//! Whether and where telemetry goes, from the standard OpenTelemetry variables (read once, at
//! start, here; the SDK reads its own tuning ones — `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`,
//! `OTEL_TRACES_SAMPLER`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS` and
//! `OTEL_EXPORTER_OTLP_TIMEOUT`). Nothing is exported until an endpoint is given.

use std::path::PathBuf;
use thiserror::Error;

/// The protocol exports speak: OTLP over HTTP with protobuf bodies.
pub const PROTOCOL: &str = "http/protobuf";

/// Why the OTEL_* variables cannot be followed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SettingsError {
    /// A protocol toolsmith does not speak.
    #[error("{var}={value:?}: toolsmith exports over OTLP {PROTOCOL} only")]
    Protocol {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// An endpoint that is no http(s) URL, or holds credentials.
    #[error("{var}={value:?} is not an http:// or https:// URL without credentials")]
    Endpoint {
        /// The variable.
        var: &'static str,
        /// Its value (credentials in it left out).
        value: String,
    },
    /// An exporter name other than `otlp` or `none`.
    #[error("{var}={value:?}: toolsmith knows the exporters \"otlp\" and \"none\"")]
    Exporter {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
}

impl toolsmith_error::Hint for SettingsError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            SettingsError::Protocol { var, .. } => format!(
                "set {var}=http/protobuf (an OpenTelemetry Collector accepts it on port 4318), or unset it"
            ),
            SettingsError::Endpoint { var, .. } => {
                format!(
                    "give {var} as a URL such as http://127.0.0.1:4318; credentials go in OTEL_EXPORTER_OTLP_HEADERS, not the URL"
                )
            }
            SettingsError::Exporter { var, .. } => format!("set {var}=otlp or {var}=none"),
        })
    }
}

/// Where one signal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The full URL posted to (`…/v1/traces`, `…/v1/metrics`).
    pub url: String,
}

/// What telemetry does in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Export {
    /// Nothing is exported; why, in words.
    Off(String),
    /// Traces and/or metrics go over OTLP.
    To {
        /// Where traces go (None: `OTEL_TRACES_EXPORTER=none`).
        traces: Option<Destination>,
        /// Where metrics go (None: `OTEL_METRICS_EXPORTER=none`).
        metrics: Option<Destination>,
    },
    /// The variables ask for something toolsmith cannot do: nothing is exported.
    Invalid(SettingsError),
}

/// The telemetry settings of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Whether and where it exports.
    pub export: Export,
    /// `service.name`: `OTEL_SERVICE_NAME`, else toolsmith (or what `OTEL_RESOURCE_ATTRIBUTES`
    /// names).
    pub service_name: Option<String>,
    /// Whether tools' arguments and results are recorded (the person's
    /// `TOOLSMITH_TELEMETRY_CONTENT`, through the configuration); redacted of every secret
    /// stored in `personal`.
    pub content: bool,
    /// The personal directory (the stored secrets content is redacted of).
    pub personal: PathBuf,
}

impl Settings {
    /// The settings the environment gives (`content` and `personal` from the configuration).
    pub fn from_env(content: bool, personal: PathBuf) -> Settings {
        Settings::from_vars(|k| std::env::var(k).ok(), content, personal)
    }

    /// The settings `var` gives (tests: a map instead of the environment).
    pub fn from_vars(
        var: impl Fn(&'static str) -> Option<String>,
        content: bool,
        personal: PathBuf,
    ) -> Settings {
        let get = |k: &'static str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let service_name = get("OTEL_SERVICE_NAME");
        let export = export(&get);
        Settings {
            export,
            service_name,
            content,
            personal,
        }
    }

    /// Settings that export nothing (tests, the CLI's commands).
    pub fn off() -> Settings {
        Settings {
            export: Export::Off("not configured".into()),
            service_name: None,
            content: false,
            personal: PathBuf::new(),
        }
    }

    /// One line for `toolsmith doctor` and the server's start: whether and where it exports.
    pub fn describe(&self) -> String {
        match &self.export {
            Export::Off(why) => format!(
                "off ({why}; set OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://127.0.0.1:4318, to export traces and metrics)"
            ),
            Export::Invalid(e) => format!("off: {e}"),
            Export::To { traces, metrics } => {
                let part = |what: &str, d: &Option<Destination>| match d {
                    Some(d) => format!("{what} to {}", d.url),
                    None => format!("no {what}"),
                };
                let content = if self.content {
                    "tools' arguments and results recorded, redacted (TOOLSMITH_TELEMETRY_CONTENT)"
                } else {
                    "no arguments or results"
                };
                format!(
                    "exporting over OTLP {PROTOCOL}: {}, {} (service {}; {content})",
                    part("traces", traces),
                    part("metrics", metrics),
                    self.service_name.as_deref().unwrap_or("toolsmith")
                )
            }
        }
    }
}

type Get<'a> = dyn Fn(&'static str) -> Option<String> + 'a;

fn export(get: &Get<'_>) -> Export {
    if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Export::Off("OTEL_SDK_DISABLED=true".into());
    }
    let base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
    let traces_url = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let metrics_url = get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    if base.is_none() && traces_url.is_none() && metrics_url.is_none() {
        return Export::Off("no OTLP endpoint configured".into());
    }
    let run = || -> Result<Export, SettingsError> {
        for var in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(value) = get(var)
                && value != PROTOCOL
            {
                return Err(SettingsError::Protocol { var, value });
            }
        }
        let wanted = |var: &'static str| -> Result<bool, SettingsError> {
            match get(var).as_deref() {
                None | Some("otlp") => Ok(true),
                Some("none") => Ok(false),
                Some(other) => Err(SettingsError::Exporter {
                    var,
                    value: other.to_string(),
                }),
            }
        };
        let signal = |on: bool, own: &Option<String>, own_var, path: &str| {
            if !on {
                return Ok(None);
            }
            let (var, url) = match (own, &base) {
                (Some(u), _) => (own_var, u.clone()),
                (None, Some(b)) => ("OTEL_EXPORTER_OTLP_ENDPOINT", join(b, path)),
                // Only the other signal's endpoint is given: this one is not exported.
                (None, None) => return Ok(None),
            };
            check_url(var, &url).map(|()| Some(Destination { url }))
        };
        let traces = signal(
            wanted("OTEL_TRACES_EXPORTER")?,
            &traces_url,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "/v1/traces",
        )?;
        let metrics = signal(
            wanted("OTEL_METRICS_EXPORTER")?,
            &metrics_url,
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            "/v1/metrics",
        )?;
        if traces.is_none() && metrics.is_none() {
            return Ok(Export::Off(
                "OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER are none".into(),
            ));
        }
        Ok(Export::To { traces, metrics })
    };
    run().unwrap_or_else(Export::Invalid)
}

/// The base endpoint joined with a signal's path, as the OTLP exporter does.
fn join(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

fn check_url(var: &'static str, url: &str) -> Result<(), SettingsError> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.contains('@') => Ok(()),
        _ => Err(SettingsError::Endpoint {
            var,
            // Never echo credentials a URL may hold.
            value: url.split('@').next_back().unwrap_or("").to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&'static str, &str)]) -> Settings {
        let m: HashMap<&str, String> = vars.iter().map(|(k, v)| (*k, v.to_string())).collect();
        Settings::from_vars(|k| m.get(k).cloned(), false, PathBuf::new())
    }

    #[test]
    fn off_until_an_endpoint_is_given() {
        assert!(matches!(with(&[]).export, Export::Off(_)));
        assert!(with(&[]).describe().contains("OTEL_EXPORTER_OTLP_ENDPOINT"));
        assert!(matches!(
            with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ])
            .export,
            Export::Off(_)
        ));
    }

    #[test]
    fn endpoints_follow_the_otlp_rules() {
        let s = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")]);
        assert_eq!(
            s.export,
            Export::To {
                traces: Some(Destination {
                    url: "http://127.0.0.1:4318/v1/traces".into()
                }),
                metrics: Some(Destination {
                    url: "http://127.0.0.1:4318/v1/metrics".into()
                }),
            }
        );
        let s = with(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:9/t"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ]);
        assert_eq!(
            s.export,
            Export::To {
                traces: Some(Destination {
                    url: "http://c:9/t".into()
                }),
                metrics: None
            }
        );
        assert!(s.describe().contains("no metrics"), "{}", s.describe());
    }

    #[test]
    fn what_cannot_be_followed_is_said() {
        let s = with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(matches!(
            &s.export,
            Export::Invalid(SettingsError::Protocol { .. })
        ));
        let s = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://user:pw@host:1")]);
        assert!(!s.describe().contains("pw"), "{}", s.describe());
        assert!(matches!(
            &s.export,
            Export::Invalid(SettingsError::Endpoint { .. })
        ));
    }
}
