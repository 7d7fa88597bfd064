extension HTMLReport {
    /// The page's only style sheet, inline. System fonts, no animations; `.bad` is the red of
    /// lost and duplicated pushes.
    static let style = """
        :root{color-scheme:light}
        body{margin:0;background:#F5F6F8;color:#1D1D1F;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
        main{max-width:760px;margin:0 auto;padding:24px 16px 48px}
        h1{font-size:24px;margin:0 0 4px}
        .settings{color:#555;margin:0}
        .command{margin:4px 0 12px}
        code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#E9EBEE;padding:2px 4px;border-radius:3px;word-break:break-all}
        .verdict{font-weight:600;padding:8px 12px;border-radius:6px;margin:12px 0}
        .verdict.ok{background:#E6F4EA;color:#1E6B34}
        .verdict.bad{background:#FDECEA;color:#B3261E}
        table{border-collapse:collapse;width:100%;margin:12px 0 20px;background:#FFF;border:1px solid #E1E3E6}
        th,td{padding:6px 10px;border-bottom:1px solid #E9EBEE;text-align:left;font-weight:normal}
        thead th{font-weight:600;color:#555}
        .num{text-align:right;font-variant-numeric:tabular-nums;font-weight:600}
        .note,.none{color:#666}
        .bad{color:#B3261E;font-weight:700}
        figure{margin:0 0 20px;background:#FFF;border:1px solid #E1E3E6;border-radius:6px;padding:8px}
        figcaption{color:#555;font-size:13px;padding:6px 6px 0}
        svg.chart{display:block;width:100%;height:auto}
        footer{color:#666;font-size:13px;margin-top:24px}
        """
}
