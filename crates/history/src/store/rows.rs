//! Rows read back the same way from either engine.

use crate::record::{Reset, RunRow, RunStatus};
use crate::series::SeriesKey;

/// A row as both engines give it.
pub(crate) trait Row {
    fn int(&self, i: usize) -> crate::Result<i64>;
    fn text(&self, i: usize) -> crate::Result<String>;
    fn opt_text(&self, i: usize) -> crate::Result<Option<String>>;
    fn opt_float(&self, i: usize) -> crate::Result<Option<f64>>;
}

/// Folds the rows of [`super::sql::runs_of_series`] (one per figure, in run order) into runs.
pub(crate) fn fold_runs<R: Row>(
    rows: impl IntoIterator<Item = crate::Result<R>>,
) -> crate::Result<Vec<RunRow>> {
    let mut out: Vec<RunRow> = Vec::new();
    for row in rows {
        let row = row?;
        let id = row.int(0)?;
        if out.last().is_none_or(|r| r.id != id) {
            let status = RunStatus::from_parts(&row.text(8)?, row.opt_text(9)?);
            out.push(RunRow {
                id,
                key: SeriesKey { preset: row.text(1)?, machine: row.text(2)?, lane: row.text(3)? },
                recorded_at: row.text(4)?,
                kind: row.text(5)?,
                source: row.opt_text(6)?,
                verdict: row.text(7)?,
                status,
                build: row.opt_text(10)?,
                fingerprint: row.text(11)?,
                identity: serde_json::from_str(&row.text(12)?)
                    .map_err(|e| crate::Error::new(format!("run #{id}: unreadable identity: {e}")))?,
                figures: Default::default(),
            });
        }
        if let (Some(name), Some(value)) = (row.opt_text(13)?, row.opt_float(14)?) {
            out.last_mut().expect("pushed above").figures.insert(name, value);
        }
    }
    Ok(out)
}

/// A row of [`super::sql::RESETS`].
pub(crate) fn reset<R: Row>(row: &R) -> crate::Result<Reset> {
    Ok(Reset {
        id: Some(row.int(0)?),
        key: SeriesKey { preset: row.text(1)?, machine: row.text(2)?, lane: row.text(3)? },
        run_id: row.int(4)?,
        metric: row.opt_text(5)?,
        note: row.text(6)?,
        created_at: row.text(7)?,
    })
}
