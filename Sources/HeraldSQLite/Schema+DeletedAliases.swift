import GRDB

extension Schema {
    /// Migration `v8-deleted-aliases`: the aliases of deleted devices, so their webhook URLs
    /// answer `410 device_deleted` instead of being taken for raw push tokens.
    static func addDeletedAliases(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE deleted_alias (alias TEXT PRIMARY KEY, deleted_at REAL NOT NULL) WITHOUT ROWID")
    }
}
