import RichPushCore
import RichPushNH
import Testing

@testable import RichPushAPI

@Suite("NH installation patches")
struct NHInstallationPatchTests {
    static let base =
        #"{"installationId":"dev-1","platform":"apns","pushChannel":"tok","tags":["a","b"],"#
        + #""templates":{"t1":{"body":"{\"aps\":{\"alert\":\"$(m)\"}}","tags":["x"]}}}"#

    /// The installation after `patch` on ``base``.
    static func patched(_ patch: String) throws -> Installation {
        let document = try #require(JSONValue.parse(Array(base.utf8)))
        let steps = try NHInstallationPatch(#require(JSONValue.parse(Array(patch.utf8))))
        return try NHInstallationDocument.installation(steps.applied(to: document), id: "dev-1", updatedAt: 1)
    }

    @Test func tagsAreAddedAndRemovedByValue() throws {
        #expect(try Self.patched(#"[{"op":"add","path":"/tags","value":"c"}]"#).tags == ["a", "b", "c"])
        #expect(try Self.patched(#"[{"op":"add","path":"/tags","value":["b","d"]}]"#).tags == ["a", "b", "d"])
        #expect(try Self.patched(#"[{"op":"add","path":"/tags","value":"[\"e\",\"f\"]"}]"#).tags == ["a", "b", "e", "f"])
        #expect(try Self.patched(#"[{"op":"remove","path":"/tags/a"}]"#).tags == ["b"])
        #expect(try Self.patched(#"[{"op":"Replace","path":"/tags","value":["z"]}]"#).tags == ["z"], "ops in any case (NH's table)")
        #expect(try Self.patched(#"[{"op":"remove","path":"/tags","value":null}]"#).tags == [], ".NET sends a remove's value as null")
    }

    @Test func userAndChannel() throws {
        let moved = try Self.patched(
            #"[{"op":"add","path":"/userId","value":"alice"},{"op":"replace","path":"/pushChannel","value":"tok2"}]"#)
        #expect(moved.owner == "alice" && moved.handle == "tok2" && moved.tags.contains("username:alice"))
    }

    @Test func templatesWholeOrByField() throws {
        let added = try Self.patched(
            ##"[{"op":"add","path":"/templates/t2","value":"{\"body\":\"{\\\"aps\\\":{\\\"badge\\\":\\\"#(n)\\\"}}\"}"}]"##)
        #expect(added.templates.map(\.name) == ["t1", "t2"], "a template sent as a string holding its JSON, as the SDKs send it")
        #expect(try Self.patched(#"[{"op":"remove","path":"/templates/t1"}]"#).templates.isEmpty)
        let body = try Self.patched(#"[{"op":"replace","path":"/templates/t1/body","value":"{\"aps\":{\"alert\":\"$(n)\"}}"}]"#)
        #expect(body.templates.first?.body == #"{"aps":{"alert":"$(n)"}}"#)
        let tags = try Self.patched(
            #"[{"op":"add","path":"/templates/t1/tags","value":"y"},{"op":"remove","path":"/templates/t1/tags/x"}]"#)
        #expect(tags.templates.first?.tags == ["y"])
        let headers = try Self.patched(#"[{"op":"add","path":"/templates/t1/headers","value":{"apns-priority":"5"}}]"#)
        #expect(headers.templates.first?.headers == ["apns-priority": "5"])
    }

    @Test(arguments: [
        (#"{"op":"add"}"#, "JSON Patch"),
        ("[]", "1 to 64 operations"),
        (#"[{"op":"move","path":"/tags","from":"/x"}]"#, "unknown field 'from'"),
        (#"[{"op":"copy","path":"/tags"}]"#, "op 'copy' is not served"),
        (#"[{"op":"add","path":"/tags"}]"#, "needs a 'value'"),
        (#"[{"op":"add","path":"tags","value":"a"}]"#, "JSON Pointer"),
        (#"[{"op":"add","path":"/platform","value":"gcm"}]"#, "not one NH patches"),
        (#"[{"op":"replace","path":"/tags/a","value":"c"}]"#, "replace the list"),
        (#"[{"op":"add","path":"/tags","value":{"a":1}}]"#, "a tag or an array of tags"),
        (#"[{"op":"replace","path":"/templates/none/body","value":"{}"}]"#, "no template 'none'"),
        (#"[{"op":"add","path":"/templates/t2","value":"not json"}]"#, "a JSON object"),
        (#"[{"op":"add","path":"/tags","value":"bad tag"}]"#, "may only hold"),
        (#"[{"op":"remove","path":"/pushChannel"}]"#, "'pushChannel' is required"),
    ])
    func refusals(patch: String, words: String) {
        #expect {
            _ = try Self.patched(patch)
        } throws: { error in
            guard let error = error as? NHError else { return false }
            return error.status == 400 && error.message.contains(words)
        }
    }

    @Test func aPatchOfTooManyOperationsIsRefusedBeforeAnyIsApplied() throws {
        let many = "[" + Array(repeating: #"{"op":"add","path":"/tags","value":"a"}"#, count: 65).joined(separator: ",") + "]"
        #expect(throws: NHError.self) { try NHInstallationPatch(#require(JSONValue.parse(Array(many.utf8)))) }
    }
}
