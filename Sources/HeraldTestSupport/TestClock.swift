import Foundation
import NIOConcurrencyHelpers

/// A wall clock a test moves by hand, for code that takes a `now: @Sendable () -> Date`.
///
/// Token caches read it; a test jumps 50 minutes with ``advance(by:)`` instead of sleeping.
public final class TestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    public init(_ start: Date = Date()) {
        current = NIOLockedValueBox(start)
    }

    public var now: Date { current.withLockedValue { $0 } }

    /// Moves the clock forward.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let interval = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        current.withLockedValue { $0 = $0.addingTimeInterval(interval) }
    }

    /// The closure to inject.
    public var function: @Sendable () -> Date { { [current] in current.withLockedValue { $0 } } }
}
