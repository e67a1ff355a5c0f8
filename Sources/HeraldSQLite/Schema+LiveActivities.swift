import GRDB

extension Schema {
    /// Migration `v16-live-activities`: each device's ActivityKit push-to-start token, and each
    /// swap's activity (its token, and what was last sent to it: order, timestamps, the update
    /// waiting for its slot). Both go with their device.
    static func addLiveActivities(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE live_activity_start (
                    device_id TEXT PRIMARY KEY NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                    token TEXT NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE live_activity (
                    device_id TEXT NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                    swap_id TEXT NOT NULL,
                    push_token TEXT,
                    last_rank INTEGER NOT NULL,
                    last_timestamp INTEGER NOT NULL,
                    last_sent_at REAL NOT NULL,
                    pending_job_id TEXT,
                    pending_event TEXT,
                    ended INTEGER NOT NULL DEFAULT 0,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (device_id, swap_id)
                ) WITHOUT ROWID;
                """
        )
    }
}
