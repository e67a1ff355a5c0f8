extension PostgresSchema {
    /// Version 15: Live Activities (the SQLite store's `v16-live-activities`, which says why it
    /// is shaped so).
    static let liveActivities = Migration(
        version: 15,
        name: "live-activities",
        statements: [
            """
            CREATE TABLE live_activity_start (
                device_id text PRIMARY KEY REFERENCES device (id) ON DELETE CASCADE,
                token text NOT NULL,
                updated_at double precision NOT NULL
            )
            """,
            """
            CREATE TABLE live_activity (
                device_id text NOT NULL REFERENCES device (id) ON DELETE CASCADE,
                swap_id text NOT NULL,
                push_token text,
                last_rank integer NOT NULL,
                last_timestamp bigint NOT NULL,
                last_sent_at double precision NOT NULL,
                pending_job_id text,
                pending_event text,
                ended boolean NOT NULL DEFAULT false,
                updated_at double precision NOT NULL,
                PRIMARY KEY (device_id, swap_id)
            )
            """,
        ])
}
