use super::{decode_entities, html_to_text};

#[test]
fn drops_scripts_styles_and_comments() {
    let html = "<html><head><title>T</title><style>p{}</style></head><body>\
                <script>var x = '<p>';</script><!-- note --><p>Hello <b>world</b>!</p></body></html>";
    assert_eq!(html_to_text(html), "# T\n\nHello world!");
}

#[test]
fn keeps_structure() {
    let html = "<h1>Title</h1><p>One\n   two</p><ul><li>a</li><li>b <a href=\"/x\">link</a></li></ul>\
                <pre>  keep\n    this</pre><p>x<br>y</p>";
    assert_eq!(
        html_to_text(html),
        "# Title\n\nOne two\n\n- a\n- b [link](/x)\n\n  keep\n    this\n\nx\ny"
    );
}

#[test]
fn decodes_entities_and_tolerates_junk() {
    assert_eq!(
        decode_entities("a &amp; b &lt;c&gt; &#65;&#x42; &bogus; &"),
        "a & b <c> AB &bogus; &"
    );
    assert_eq!(html_to_text("1 < 2 and <p attr='>'>ok"), "1 < 2 and\n\nok");
    assert_eq!(html_to_text("<div>unclosed <script>never"), "unclosed");
    assert_eq!(html_to_text(""), "");
}

#[test]
fn anchors_without_a_link_are_plain_text() {
    assert_eq!(
        html_to_text("<p>see <a name=\"top\">here</a> and <a href=\"#s\">there</a></p>"),
        "see here and there"
    );
}
