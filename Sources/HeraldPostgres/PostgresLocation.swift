import Foundation

/// Where the PostgreSQL database is: parsed from `postgres://user:password@host:port/database`
/// (or `postgresql://…`), as `HERALD_DATABASE` gives it.
public struct PostgresLocation: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var username: String
    /// Never logged: ``redacted`` stands in for the URL wherever it is shown.
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// `sslmode`, reduced to what this server does with it.
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP (`sslmode=disable`; the default on a loopback address).
        case disable
        /// TLS when the server offers it (`allow`, `prefer`; the default elsewhere).
        case prefer
        /// TLS or no connection (`require`, `verify-ca`, `verify-full`).
        case require
    }

    public init(
        host: String, port: Int = 5432, username: String, password: String?, database: String,
        tls: TLSMode
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Whether `text` names a PostgreSQL database rather than a SQLite file.
    public static func isPostgresURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// Parses a `postgres://` URL; user and password may be percent-encoded.
    public init(url text: String) throws(PostgresLocationError) {
        guard Self.isPostgresURL(text), let components = URLComponents(string: text) else {
            throw PostgresLocationError("not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresLocationError("the URL names no host")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresLocationError("the URL names no database (postgres://user@host:port/DATABASE)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresLocationError("the URL names no user")
        }
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        let tls: TLSMode
        switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value?.lowercased() {
        case nil: tls = loopback ? .disable : .prefer
        case "disable": tls = .disable
        case "allow", "prefer": tls = .prefer
        case "require", "verify-ca", "verify-full": tls = .require
        case let other?: throw PostgresLocationError("unknown sslmode '\(other)'")
        }
        self.init(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host,
            port: components.port ?? 5432,
            username: user,
            password: components.password,
            database: database,
            tls: tls
        )
    }

    /// The URL without its password, for logs.
    public var redacted: String {
        let secret = password == nil ? "" : ":***"
        return "postgres://\(username)\(secret)@\(host):\(port)/\(database)"
    }
}

/// A `HERALD_DATABASE` URL that could not be read. Never quotes the URL (it may hold a password).
public struct PostgresLocationError: Error, Hashable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
