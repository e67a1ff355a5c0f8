import Foundation
import NIOCore
import NIOExtras
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an UPDATE goes: the zone's primary server.
public struct DNSServerAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int = 53) {
        self.host = host
        self.port = port
    }

    /// `ns1.example.com`, `192.0.2.1:5353`, `[2001:db8::1]:53`, `2001:db8::1`; nil for anything else.
    public init?(_ text: String) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard Self.isIPv6(host) else { return nil }
            if rest.isEmpty {
                self.init(host: host)
                return
            }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            self.init(host: host, port: port)
            return
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1 where !text.isEmpty:
            self.init(host: text)
        case 2 where !parts[0].isEmpty:
            guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            self.init(host: String(parts[0]), port: port)
        default:
            // A bare IPv6 address: its colons leave no room for a port.
            guard Self.isIPv6(text) else { return nil }
            self.init(host: text)
        }
    }

    private static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// What the server answered to an UPDATE whose answer was authentic (or an unsigned refusal,
/// which can only stop a publication, never fake one).
public enum DNSUpdateResult: Sendable, Hashable, CustomStringConvertible {
    /// NOERROR: the change is made.
    case success
    /// SERVFAIL: the server could not apply it now (storage, signing); worth another try.
    case serverFailure
    /// REFUSED: policy forbids this key this change.
    case refused
    /// NOTAUTH without a TSIG error: the server is not authoritative for the zone.
    case notAuth
    /// NOTZONE: a name outside the zone.
    case notZone
    /// FORMERR: the server could not read the message.
    case formatError
    /// BADSIG: the server has the key under that name, with another secret.
    case badSignature
    /// BADKEY: the server has no key of that name and algorithm.
    case badKey
    /// BADTIME: this machine's clock and the server's differ by more than the fudge.
    case badTime
    /// Anything else (NOTIMP, a prerequisite failure Herald never asks for).
    case other(DNSResponseCode)

    init(_ code: DNSResponseCode) {
        switch code {
        case .noError: self = .success
        case .serverFailure: self = .serverFailure
        case .refused: self = .refused
        case .notAuth: self = .notAuth
        case .notZone: self = .notZone
        case .formatError: self = .formatError
        case .badSignature: self = .badSignature
        case .badKey: self = .badKey
        case .badTime: self = .badTime
        default: self = .other(code)
        }
    }

    /// Only SERVFAIL: every other failure comes back the same until someone changes the
    /// server's configuration, the key or the clock.
    public var isRetryable: Bool { self == .serverFailure }

    /// A machine-readable name: `success`, `servfail`, `refused`, `notauth`, `notzone`,
    /// `formerr`, `badsig`, `badkey`, `badtime`, or `rcode_<n>`.
    public var reason: String {
        switch self {
        case .success: "success"
        case .serverFailure: "servfail"
        case .refused: "refused"
        case .notAuth: "notauth"
        case .notZone: "notzone"
        case .formatError: "formerr"
        case .badSignature: "badsig"
        case .badKey: "badkey"
        case .badTime: "badtime"
        case .other(let code): "rcode_\(code.rawValue)"
        }
    }

    public var description: String { reason }
}

/// Why there is no answer to report: the server could not be reached or held to its word.
public typealias DNSClientError = DNSError<DNSClientErrorReason>

/// Where an exchange with the server failed (``DNSClientError``).
public enum DNSClientErrorReason: String, Sendable {
    /// No TCP connection (refused, unreachable, the name did not resolve).
    case connectionFailed = "connection_failed"
    /// No whole answer within the timeout.
    case timedOut = "timed_out"
    /// The server closed the connection before a whole answer.
    case connectionClosed = "connection_closed"
    /// Over 65,535 bytes: more than TCP's length prefix can frame.
    case messageTooLarge = "message_too_large"
    /// An answer that does not parse.
    case malformedResponse = "malformed_response"
    /// An answer to another message: another ID, not QR, another OPCODE.
    case unexpectedResponse = "unexpected_response"
    /// A success without a TSIG record: it could be anyone's.
    case unsignedResponse = "unsigned_response"
    /// A TSIG record that does not verify with the request's key.
    case badResponseSignature = "bad_response_signature"
}

extension DNSError where Why == DNSClientErrorReason {
    /// Whether trying again later may succeed: the server was unreachable or went away. An
    /// answer that cannot be read or trusted stays so, and needs a person.
    public var isRetryable: Bool {
        switch reason {
        case .connectionFailed, .timedOut, .connectionClosed: true
        case .messageTooLarge, .malformedResponse, .unexpectedResponse, .unsignedResponse, .badResponseSignature: false
        }
    }
}

/// Sends UPDATEs and queries over TCP (RFC 1035 §4.2.2: each message behind a 2-byte length),
/// one connection per message. TCP rather than UDP: an UPDATE with a long TXT record and its
/// TSIG does not fit a datagram's safe size, and a lost datagram would leave "did it apply?"
/// open where a TCP exchange either answers or fails as a connection.
public struct DNSClient: Sendable {
    public let eventLoopGroup: any EventLoopGroup

    public init(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.eventLoopGroup = eventLoopGroup
    }

    /// Signs `message` with `key` now and sends it; throws only when there is no trustworthy
    /// answer (see ``DNSClientError/isRetryable``).
    public func update(
        _ message: DNSUpdateMessage, key: TSIGKey, server: DNSServerAddress, timeout: Duration
    ) async throws(DNSClientError) -> DNSUpdateResult {
        try await update(signed: key.sign(message.encoded(), time: Self.now()), server: server, timeout: timeout)
    }

    /// Sends an UPDATE already signed, and checks the answer's TSIG with the request's key.
    public func update(signed request: SignedDNSRequest, server: DNSServerAddress, timeout: Duration) async throws(DNSClientError)
        -> DNSUpdateResult
    {
        let response = try await exchange(request.bytes, id: request.id, server: server, timeout: timeout)
        guard response.opcode == .update else { throw DNSClientError(.unexpectedResponse, "OPCODE \(response.opcode.rawValue)") }
        if let tsig = response.tsig, tsig.mac.isEmpty, tsig.error == .badSignature || tsig.error == .badKey {
            // A server that could not check the request's MAC cannot sign its answer either
            // (RFC 8945 §5.3.2): the error is all there is to report.
            return DNSUpdateResult(tsig.error)
        }
        if response.tsig == nil {
            guard response.responseCode != .noError else { throw DNSClientError(.unsignedResponse) }
            // An unsigned refusal (a FORMERR before the server reached the TSIG record, say):
            // reported for what it says, since trusting it can only leave a record unpublished.
            return DNSUpdateResult(response.responseCode)
        }
        do {
            try request.key.verify(response, answering: request, now: Self.now())
        } catch {
            throw DNSClientError(.badResponseSignature, error.description)
        }
        return DNSUpdateResult(response.responseCode)
    }

    /// Asks the server for `name`'s `type` records and returns its whole answer, whatever its
    /// RCODE; with `dnssec`, the RRSIGs that cover them too.
    public func query(
        _ name: DNSName, type: DNSRecordType, dnssec: Bool = false, server: DNSServerAddress, timeout: Duration
    ) async throws(DNSClientError) -> DNSMessage {
        let query = DNSQuery(name: name, type: type, dnssec: dnssec)
        let response = try await exchange(query.encoded(), id: query.id, server: server, timeout: timeout)
        guard response.opcode == .query else { throw DNSClientError(.unexpectedResponse, "OPCODE \(response.opcode.rawValue)") }
        return response
    }

    static func now() -> UInt64 { UInt64(Date().timeIntervalSince1970) }

    /// One message out, one answer back, within `timeout` from the connection's start to the answer.
    private func exchange(_ bytes: [UInt8], id: UInt16, server: DNSServerAddress, timeout: Duration) async throws(DNSClientError)
        -> DNSMessage
    {
        guard bytes.count <= Int(UInt16.max) else { throw DNSClientError(.messageTooLarge, "\(bytes.count) bytes") }
        let components = timeout.components
        let budget = TimeAmount.nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        let deadline = NIODeadline.now() + budget
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(budget)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: server.host, port: server.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .twoBytes)))
                        try channel.pipeline.syncOperations.addHandler(LengthFieldPrepender(lengthFieldBitLength: .twoBytes))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            if NIODeadline.now() >= deadline { throw DNSClientError(.timedOut, "connecting to \(server)") }
            throw DNSClientError(.connectionFailed, "\(server): \(error)")
        }
        // Closing the channel at the deadline ends the read below however it waits: no task
        // has to be cancelled, and nothing blocks.
        let timer = channel.channel.eventLoop.scheduleTask(deadline: deadline) { channel.channel.close(promise: nil) }
        defer { timer.cancel() }
        let answer: [UInt8]?
        do {
            answer = try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: bytes))
                for try await frame in inbound { return Array(frame.readableBytesView) }
                return nil
            }
        } catch {
            if NIODeadline.now() >= deadline { throw DNSClientError(.timedOut, "waiting for \(server)") }
            throw DNSClientError(.connectionClosed, "\(server): \(error)")
        }
        guard let answer else {
            if NIODeadline.now() >= deadline { throw DNSClientError(.timedOut, "waiting for \(server)") }
            throw DNSClientError(.connectionClosed, "\(server) closed the connection without an answer")
        }
        let response: DNSMessage
        do {
            response = try DNSMessage(parsing: answer)
        } catch {
            throw DNSClientError(.malformedResponse, error.description)
        }
        guard response.isResponse, response.id == id else {
            throw DNSClientError(.unexpectedResponse, "ID \(response.id) (sent \(id)), QR \(response.isResponse)")
        }
        return response
    }
}
