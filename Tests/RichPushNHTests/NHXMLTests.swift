import Testing

@testable import RichPushNH

@Suite("NH's XML reader")
struct NHXMLTests {
    @Test func readsAnAtomEntryAsNHsClientsSendIt() throws {
        let entry = """
            <?xml version="1.0" encoding="utf-8"?>
            <entry xmlns="http://www.w3.org/2005/Atom">
              <content type="application/xml">
                <AppleTemplateRegistrationDescription xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">
                  <!-- a comment -->
                  <Tags>sports, news</Tags>
                  <DeviceToken>abc</DeviceToken>
                  <BodyTemplate><![CDATA[{"aps":{"alert":"$(message)"}}]]></BodyTemplate>
                  <Title>a &lt;b&gt; &amp; &#233;&#x41;</Title>
                </AppleTemplateRegistrationDescription>
              </content>
            </entry>
            """
        let root = try NHXML.parse(Array(entry.utf8))
        #expect(root.name == "entry" && root.attributes["xmlns"] == "http://www.w3.org/2005/Atom")
        let description = try #require(root.child("content")?.children.first)
        #expect(description.name == "AppleTemplateRegistrationDescription")
        #expect(description.child("Tags")?.text == "sports, news")
        #expect(description.child("BodyTemplate")?.text == #"{"aps":{"alert":"$(message)"}}"#)
        #expect(description.child("Title")?.text == "a <b> & éA")
        #expect(try NHXML.parse(Array("<a x='1' y=\"2\"/>".utf8)).attributes == ["x": "1", "y": "2"])
        #expect(try NHXML.parse(Array("<p:a xmlns:p='u'><p:b/></p:a>".utf8)).child("b") != nil, "names are local")
    }

    static let refused: [(String, String)] = [
        // XXE and billion laughs: no DOCTYPE, so no entity is defined, let alone expanded or fetched.
        (#"<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]><e>&x;</e>"#, "document type declarations"),
        (
            #"<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>"#,
            "document type declarations"
        ),
        ("<e>&x;</e>", "not one of XML's five"),
        ("<e>&#0;</e>", "not one of XML's five"),
        ("<e>a & b</e>", "starts no entity"),
        ("<e><?php x ?></e>", "processing instructions"),
        ("<?php x ?><e/>", "processing instructions"),
        ("<a><b></a></b>", "closes"),
        ("<a>", "not closed"),
        ("<a/><b/>", "after the root"),
        ("text", "starts with an element"),
        ("<a x=1/>", "quoted"),
        ("<a><![CDATA[x</a>", "CDATA section is not closed"),
        (String(repeating: "<a>", count: 17) + String(repeating: "</a>", count: 17), "deeper than 16"),
        ("<r>" + String(repeating: "<a/>", count: 600) + "</r>", "more than 512 elements"),
        ("<a " + (0..<17).map { "a\($0)='x'" }.joined(separator: " ") + "/>", "more than 16 attributes"),
        ("<a>&#xD800;</a>", "not one of XML's five"),
    ]

    @Test(arguments: refused)
    func refusals(document: String, words: String) {
        #expect {
            _ = try NHXML.parse(Array(document.utf8))
        } throws: { error in
            guard let error = error as? NHXMLError else { return false }
            return error.message.contains(words)
        }
    }

    @Test func boundsComeBeforeParsing() {
        let big = "<a>" + String(repeating: "x", count: 70_000) + "</a>"
        #expect(throws: NHXMLError.self) { try NHXML.parse(Array(big.utf8)) }
        #expect(throws: NHXMLError.self) { try NHXML.parse([0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E]) }
        // Far deeper than any stack allows recursion for: refused at the bound, not a crash.
        let hostile = String(repeating: "<a>", count: 20_000)
        #expect(throws: NHXMLError.self) { try NHXML.parse(Array(hostile.utf8)) }
    }
}
