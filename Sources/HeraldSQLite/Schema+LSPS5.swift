import GRDB
import HeraldStore

extension Schema {
    /// Migration `v5-lsps5`: a device's LSP node id, and the replay memory of LSPS5 signatures.
    ///
    /// The node id sits in its own table rather than on `device`, read only by the LSPS5 intake,
    /// so the device reads on every webhook stay as they are. A signature is remembered per
    /// device until its timestamp falls out of the accepted window (`expires_at`); the index on
    /// it lets every insert prune what has expired.
    static func addLSPS5(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE lsps5_lsp (
                    device_id TEXT PRIMARY KEY NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                    node_id TEXT NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE lsps5_seen (
                    device_id TEXT NOT NULL,
                    signature TEXT NOT NULL,
                    expires_at REAL NOT NULL,
                    PRIMARY KEY (device_id, signature)
                ) WITHOUT ROWID;
                CREATE INDEX lsps5_seen_expires ON lsps5_seen(expires_at);
                """
        )
    }
}
