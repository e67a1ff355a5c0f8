extension Optional {
    /// `map` for an async transform (a store read of an id that may be absent).
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
