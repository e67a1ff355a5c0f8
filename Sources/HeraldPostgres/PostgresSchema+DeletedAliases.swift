extension PostgresSchema {
    /// The aliases of deleted devices, so their webhook URLs answer `410 device_deleted`
    /// instead of being taken for raw push tokens.
    static let deletedAliases = Migration(
        version: 7,
        name: "deleted-aliases",
        statements: ["CREATE TABLE deleted_alias (alias text PRIMARY KEY, deleted_at double precision NOT NULL)"]
    )
}
