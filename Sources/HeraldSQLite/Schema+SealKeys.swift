import GRDB
import HeraldStore

extension Schema {
    /// Migration `v4-seal-keys`: a device's (and a backend session's) X25519 public key, base64 of
    /// its 32 raw bytes; with one, every push to it is sealed (HeraldWire's `SealedPush`). Nullable: most
    /// devices register none.
    static func addSealKeys(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE device ADD COLUMN seal_key TEXT;
                ALTER TABLE backend_session ADD COLUMN seal_key TEXT;
                """
        )
    }
}
