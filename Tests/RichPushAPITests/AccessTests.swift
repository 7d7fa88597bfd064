import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// Authentication and authorization.
@Suite("Access")
struct AccessTests {
    @Test func missingOrWrongCredentialsAre401WithAChallenge() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                for headers in [
                    HTTPFields(), APIFixture.basic("alice", "wrong"), APIFixture.basic("nobody", "x"), [.authorization: "Basic !!!"],
                ] {
                    try await client.execute(uri: "/api/notifications", method: .get, headers: headers) { response in
                        #expect(response.status == .unauthorized)
                        #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
                        #expect(response.errorCode == "unauthorized")
                    }
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .ok)
                }
            }
        }
    }

    @Test func guessesAreThrottledPerUserAndAddressNotPerAccount() async throws {
        try await withRedisServer { server in
            // A first delay of 30 s: a slow, busy machine cannot outlast it between two requests.
            let fixture = try await APIFixture(server: server) {
                $0.auth.throttle.freeFailuresPerPair = 3
                $0.auth.throttle.firstDelay = .seconds(30)
            }
            try await fixture.test { client in
                // Bob's password is remembered; it must not let a guesser skip the throttle.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .ok)
                }
                for _ in 0..<3 {
                    try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("bob", "guess")) {
                        #expect($0.status == .unauthorized)
                    }
                }
                // Even the right password waits while this (user, address) pair is in its delay.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("bob")) { response in
                    #expect(response.status == .tooManyRequests)
                    #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 > 0)
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .ok)
                }
                // Concurrent guesses are charged before bcrypt runs: only the free ones are checked.
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for attempt in 0..<40 {
                        group.addTask {
                            try await client.execute(
                                uri: "/api/notifications", method: .get, headers: APIFixture.basic("root", "guess-\(attempt)")
                            ) { $0.status }
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                // 3 free failures, then none until the 30 s delay has passed.
                let checked = statuses.filter { $0 == .unauthorized }.count
                #expect(checked == 3, "\(checked) guesses were checked")
                #expect(statuses.filter { $0 == .tooManyRequests }.count == 40 - checked)
            }
            // Another address is not slowed: nobody can lock an account out from elsewhere.
            let users = RedisUserStore(redis: fixture.redis, keys: fixture.keys)
            let policy = LoginThrottle(freeFailuresPerPair: 3)
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.7", policy: policy) == nil)
            for _ in 0..<3 { _ = try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) }
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) != nil)
            #expect(try await users.unlock(user: "bob", address: nil) == 3)
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) == nil)
        }
    }

    @Test func demoModeLetsInUserNameEqualsPasswordOnly() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.auth.mode = .demo }
            try await fixture.test { client in
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("carol", "carol")) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("carol", "other")) {
                    #expect($0.status == .unauthorized)
                }
                // bcrypt users do not get in with their real password in demo mode.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }

    @Test func othersNotificationsAndRegistrationsAre404() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let aliceDevice = try await client.register("alice", handle: "token-a")
                let id = try #require(try await client.sendImage("alice").json["id"] as? String)
                for path in ["/api/notifications/\(id)", "/api/notifications/\(id)/status"] {
                    try await client.execute(uri: path, method: .get, headers: APIFixture.basic("bob")) { response in
                        #expect(response.status == .notFound)
                        #expect(response.errorMessage == "no notification \(id)")
                    }
                }
                // The same answer as for an id that does not exist: nothing to learn by guessing.
                try await client.execute(uri: "/api/notifications/999999", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .notFound && $0.errorMessage == "no notification 999999")
                }
                try await client.execute(
                    uri: "/api/notifications/\(id)/receipts", method: .post, headers: APIFixture.basic("bob"),
                    body: APIFixture.json(["kind": "opened"])
                ) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/register/\(aliceDevice)", method: .delete, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(
                    uri: "/api/register/\(aliceDevice)", method: .put, headers: APIFixture.basic("bob"),
                    body: APIFixture.json(["Platform": "apns", "Handle": "stolen"])
                ) { #expect($0.status == .notFound) }
                // Alice's device is untouched, and she can delete it.
                try await client.execute(uri: "/api/register/\(aliceDevice)", method: .delete, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .ok)
                }
            }
        }
    }

    @Test func adminsTargetTagExpressionsAndRecipientsMayRead() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let bobDevice = try await client.register("bob", handle: "token-b", tags: ["sports"])
                _ = try await client.register("alice", handle: "token-a", tags: ["sports", "weekend"])
                // A user may not send beyond their own tag.
                let refused = try await client.sendImage("bob", target: "sports")
                #expect(refused.status == .forbidden)
                let accepted = try await client.sendImage("root", target: "sports && !weekend")
                #expect(accepted.status == .accepted)
                #expect(accepted.json["target"] as? String == "sports && !weekend")
                let id = try #require(accepted.json["id"] as? String)
                // Nobody but the creator reads it before a worker addressed it to a device.
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .notFound)
                }
                _ = try await fixture.ledger.leaseDeliveries(
                    id: Int(id)!, installations: [bobDevice], owner: "test", duration: .seconds(30))
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .notFound)
                }
                let bad = try await client.sendImage("root", target: "sports &&")
                #expect(bad.status == .unprocessableContent && bad.errorCode == "bad_target")
            }
        }
    }

    /// Fetches and receipts make their read check in the script that records them: a reader the
    /// notification was not addressed to gets 404 and leaves no count behind, whatever it sends.
    @Test func aReadIsCheckedInTheStepThatRecordsIt() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let bobDevice = try await client.register("bob", handle: "token-b", tags: ["sports"])
                let aliceDevice = try await client.register("alice", handle: "token-a", tags: ["weekend"])
                let accepted = try await client.sendImage("root", target: "sports")
                let id = try #require(accepted.json["id"] as? String)
                let bob = APIFixture.basic("bob"), alice = APIFixture.basic("alice")
                let fetch = "/api/notifications/\(id)?installation=\(bobDevice)"
                let receipt = { (device: String) in APIFixture.json(["kind": "displayed", "installation": device]) }
                let counts = { () async throws -> [String: Int] in
                    try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("root")) {
                        ($0.json["counts"] as? [String: Int]) ?? [:]
                    }
                }
                // Not addressed yet: 404 for the fetch, the receipt, and a receipt whose body is bad.
                try await client.execute(uri: fetch, method: .get, headers: bob) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/notifications/\(id)/receipts", method: .post, headers: bob, body: receipt(bobDevice)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(
                    uri: "/api/notifications/\(id)/receipts", method: .post, headers: bob,
                    body: APIFixture.json(["kind": "read-it", "installation": bobDevice])
                ) { #expect($0.status == .notFound) }
                var before = try await counts()
                #expect(before["fetched"] == 0 && before["displayed"] == 0)
                _ = try await fixture.ledger.leaseDeliveries(
                    id: Int(id)!, installations: [bobDevice], owner: "test", duration: .seconds(30))
                let etag = try await client.execute(uri: fetch, method: .get, headers: bob) { response in
                    #expect(response.status == .ok)
                    return response.headers[.eTag] ?? ""
                }
                var revalidate = bob
                revalidate[.ifNoneMatch] = etag
                try await client.execute(uri: fetch, method: .get, headers: revalidate) { #expect($0.status == .notModified) }
                try await client.execute(uri: "/api/notifications/\(id)/receipts", method: .post, headers: bob, body: receipt(bobDevice)) {
                    response in
                    #expect(response.status == .ok)
                    #expect(response.json["duplicate"] as? Bool == false)
                }
                try await client.execute(uri: "/api/notifications/\(id)/receipts", method: .post, headers: bob, body: receipt(bobDevice)) {
                    response in
                    #expect(response.json["duplicate"] as? Bool == true)
                }
                // Bob's kind that does not exist is refused by name once he may read it.
                try await client.execute(
                    uri: "/api/notifications/\(id)/receipts", method: .post, headers: bob,
                    body: APIFixture.json(["kind": "read-it", "installation": bobDevice])
                ) { #expect($0.status == .unprocessableContent) }
                // Alice's device was never addressed: 404 with or without her device named, with an ETag too.
                var aliceRevalidate = alice
                aliceRevalidate[.ifNoneMatch] = etag
                try await client.execute(uri: "/api/notifications/\(id)?installation=\(aliceDevice)", method: .get, headers: alice) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: alice) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: aliceRevalidate) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(
                    uri: "/api/notifications/\(id)/receipts", method: .post, headers: alice, body: receipt(aliceDevice)
                ) {
                    #expect($0.status == .notFound)
                }
                before = try await counts()
                #expect(before["fetched"] == 1 && before["displayed"] == 1)
            }
        }
    }

    @Test func usersMayOnlyPutTheirOwnUserTagOnDevices() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let id = try await client.execute(uri: "/api/register", method: .post, headers: APIFixture.basic("bob")) {
                    try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                }
                try await client.execute(
                    uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("bob"),
                    body: APIFixture.json(["Platform": "apns", "Handle": "h", "Tags": ["username:alice"]])
                ) { response in
                    #expect(response.status == .forbidden)
                }
                try await client.execute(
                    uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("bob"),
                    body: APIFixture.json(["Platform": "APNS", "Handle": "h", "Tags": ["news"]])
                ) { response in
                    #expect(response.status == .ok)
                    #expect(response.json["Tags"] as? [String] == ["news", "username:bob"])
                }
            }
        }
    }
}
