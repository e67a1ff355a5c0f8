import Logging
import PostgresNIO

/// The PostgreSQL schema: the SQLite store's tables with PostgreSQL types. Times are `double
/// precision` seconds since 1970, as in SQLite: every moment comes from the server's injected
/// clock, never the database's, so both back ends compare the same numbers. Payloads are
/// `bytea`; states are text with a CHECK.
///
/// Migrations are append-only, numbered, and applied in order inside an advisory lock, so
/// instances starting together migrate once.
///
/// The migrations mirror SQLite's `Schema` file for file (`PostgresSchema+X.swift` beside
/// `Schema+X.swift`), with one difference of history, which stays: `seal_key` is on `device` and
/// `backend_session` from versions 1 and 2 here, where SQLite added it in `v4-seal-keys`; so
/// there is no `PostgresSchema+SealKeys.swift`, and from SQLite's v5 on the versions here are
/// one lower.
enum PostgresSchema {
    struct Migration {
        var version: Int
        var name: String
        /// One statement each: the extended query protocol takes a single statement per query.
        var statements: [String]
    }

    /// The advisory lock key (a constant of our own: "herald" in ASCII, 0x686572616c64).
    static let migrationLock = 0x6865_7261_6c64

    static let migrations: [Migration] = [
        Migration(
            version: 1,
            name: "outbox-devices",
            statements: [
                """
                CREATE TABLE job (
                    id text PRIMARY KEY,
                    platform text NOT NULL,
                    token text NOT NULL,
                    notification_type text NOT NULL,
                    payload bytea NOT NULL,
                    idempotency_key text UNIQUE,
                    state text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
                    attempts integer NOT NULL DEFAULT 0,
                    next_attempt_at double precision NOT NULL,
                    lease_until double precision,
                    created_at double precision NOT NULL,
                    expires_at double precision NOT NULL,
                    finished_at double precision,
                    last_error text
                )
                """,
                "CREATE INDEX job_due ON job (next_attempt_at) WHERE state = 'pending'",
                "CREATE INDEX job_token ON job (platform, token) WHERE state = 'pending'",
                "CREATE INDEX job_finished ON job (state, finished_at) WHERE state <> 'pending'",
                """
                CREATE TABLE dead_token (
                    platform text NOT NULL,
                    token text NOT NULL,
                    reason text NOT NULL,
                    marked_at double precision NOT NULL,
                    PRIMARY KEY (platform, token)
                )
                """,
                """
                CREATE TABLE device (
                    id text PRIMARY KEY,
                    platform text NOT NULL,
                    token text NOT NULL,
                    alias text NOT NULL UNIQUE,
                    secret_hash bytea NOT NULL,
                    seal_key text,
                    created_at double precision NOT NULL,
                    updated_at double precision NOT NULL
                )
                """,
                "CREATE INDEX device_token ON device (platform, token)",
                """
                CREATE TABLE local_push (
                    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    platform text NOT NULL,
                    token text NOT NULL,
                    payload bytea NOT NULL,
                    created_at double precision NOT NULL
                )
                """,
                "CREATE INDEX local_push_token ON local_push (platform, token, seq)",
            ]
        ),
        backend,
        replies,
        lsps5,
        deadLetters,
        apps,
        deletedAliases,
        zaps,
        identities,
        Migration(
            version: 10, name: "idempotency-fingerprints",
            // What an idempotency key was sent with: another body under the same key is refused.
            statements: ["ALTER TABLE job ADD COLUMN idempotency_fingerprint text"]),
        Migration(
            version: 11, name: "device-challenges",
            // registration: challenge — a device's one-time code, and when it came back.
            statements: [
                """
                CREATE TABLE device_challenge (
                    device_id text PRIMARY KEY REFERENCES device (id) ON DELETE CASCADE,
                    code_hash bytea NOT NULL,
                    created_at double precision NOT NULL,
                    confirmed_at double precision
                )
                """
            ]),
        wakeLedger,
        nwc,
        nwcOwnedRegistrations,
        liveActivities,
        bip353,
    ]

    /// Applies the migrations not yet applied, holding the advisory lock on this connection.
    /// Returns the versions applied now.
    static func migrate(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.query("SELECT pg_advisory_lock(\(migrationLock))", logger: logger)
        do {
            let applied = try await migrateLocked(on: connection, logger: logger)
            try await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
            return applied
        } catch {
            // Closing the connection frees the lock in any case.
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
            throw error
        }
    }

    private static func migrateLocked(
        on connection: PostgresConnection, logger: Logger
    ) async throws
        -> [Int]
    {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
        var done: Set<Int> = []
        for try await version in try await connection.query(
            "SELECT version FROM schema_migrations", logger: logger
        )
        .decode(Int.self) {
            done.insert(version)
        }
        var applied: [Int] = []
        for migration in migrations where !done.contains(migration.version) {
            try await connection.withTransaction(logger: logger) { connection in
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger
                )
            }
            logger.info(
                "applied migration",
                metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            applied.append(migration.version)
        }
        return applied
    }
}
