extension PostgresSchema {
    /// Several apps per deployment: jobs, devices and backend sessions name their app (earlier
    /// rows: `default`); provider tokens are shared through `provider_token`; per-device push
    /// allowances through `target_rate` (keys are hashes, never tokens); wake claims through
    /// `wake_claim`, so two instances push one wake once.
    static let apps = Migration(
        version: 6,
        name: "apps",
        statements: [
            "ALTER TABLE job ADD COLUMN app text NOT NULL DEFAULT 'default'",
            "ALTER TABLE device ADD COLUMN app text NOT NULL DEFAULT 'default'",
            "ALTER TABLE backend_session ADD COLUMN app text NOT NULL DEFAULT 'default'",
            """
            CREATE TABLE provider_token (
                key text PRIMARY KEY,
                value text NOT NULL,
                issued_at double precision NOT NULL,
                refresh_at double precision NOT NULL,
                claimed_by text,
                claim_until double precision
            )
            """,
            "CREATE TABLE target_rate (key text PRIMARY KEY, tokens double precision NOT NULL, updated_at double precision NOT NULL)",
            """
            CREATE TABLE wake_claim (
                repeat_key text PRIMARY KEY, claimed_at double precision NOT NULL, idempotency_key text
            )
            """,
        ]
    )
}
