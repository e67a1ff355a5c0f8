import GRDB
import HeraldStore

extension Schema {
    /// Migration `v3-replies`: held request/response round trips through a sleeping phone,
    /// cached device answers, and Lightning-address usernames.
    static func createReplyTables(_ db: Database) throws {
        try db.execute(
            sql: """
                -- One row per reply URL handed to a device. 'pending' until the device answers
                -- ('answered', body kept for a waiter in another process) or the caller gives up
                -- ('expired'). Answered and expired rows stay as tombstones (409/410) until swept.
                CREATE TABLE pending_reply (
                    id TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    state TEXT NOT NULL,
                    body BLOB,
                    cache_max_age INTEGER,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    answered_at REAL
                );
                CREATE INDEX pending_reply_expires ON pending_reply(expires_at);

                -- Device answers sent with Cache-Control: max-age, served without a new push.
                CREATE TABLE reply_cache (
                    key TEXT PRIMARY KEY NOT NULL,
                    body BLOB NOT NULL,
                    max_age INTEGER NOT NULL,
                    expires_at REAL NOT NULL
                ) WITHOUT ROWID;

                -- LUD-16 usernames: one per device, one device per name. `pay_info` is the last
                -- LNURL-pay info the device gave (limits, exact metadata), for the callback step.
                CREATE TABLE lightning_address (
                    username TEXT PRIMARY KEY NOT NULL,
                    device_id TEXT NOT NULL UNIQUE REFERENCES device(id) ON DELETE CASCADE,
                    pay_info BLOB,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;
                """
        )
    }
}
