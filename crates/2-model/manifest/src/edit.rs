//! Edits of tool.toml text that keep a person's formatting and comments (toml_edit).

use toml_edit::{DocumentMut, Item, Table, value};

/// Why an edit could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot edit tool.toml: {0}")]
pub struct EditError(String);

/// Set (or remove, with None) `[hashes] source` and `artifact`, keeping everything else.
pub fn set_hashes(
    text: &str,
    source: Option<&str>,
    artifact: Option<&str>,
) -> Result<String, EditError> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| EditError(e.to_string()))?;
    if !doc.contains_key("hashes") {
        let mut t = Table::new();
        t.decor_mut().set_prefix("\n");
        doc.insert("hashes", Item::Table(t));
    }
    let hashes = doc["hashes"]
        .as_table_mut()
        .ok_or_else(|| EditError("`hashes` is not a table".into()))?;
    for (key, v) in [("source", source), ("artifact", artifact)] {
        match v {
            Some(v) => {
                hashes[key] = value(v);
            }
            None => {
                hashes.remove(key);
            }
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_replaces_hashes() {
        let text = "# my tool\nname = \"x\" # the name\n\n[hashes]\nsource = \"sha256:old\"\n";
        let out = set_hashes(text, Some("sha256:new"), Some("sha256:art")).unwrap();
        assert!(out.contains("# my tool") && out.contains("# the name"));
        assert!(
            out.contains("source = \"sha256:new\"") && out.contains("artifact = \"sha256:art\"")
        );
        let added = set_hashes("name = \"x\"\n", Some("sha256:s"), None).unwrap();
        assert!(added.contains("[hashes]\nsource = \"sha256:s\""), "{added}");
    }
}
