package demosite

import (
	"fmt"
	"html"
	"strings"
)

// Article is the content of a detail page.
type Article struct {
	ID    int
	Title string
	Body  string
	Tags  []string
	Image string
}

var words = strings.Fields(`market city river council energy school music garden
science league museum harbor budget festival station bridge forest library
transit climate election vaccine robot orbit novel theater harvest ocean`)

var hanzi = []string{"城市", "经济", "科技", "教育", "文化", "体育", "环境", "交通", "健康", "艺术", "新闻", "发展"}

// ArticleFor returns detail id's article. Every 25th article repeats the one
// before it with one word changed: a near-duplicate under another URL. Every
// 50th page (id%50 == 7) is in Chinese.
func ArticleFor(id int) Article {
	src := id
	if id%25 == 0 && id > 1 {
		src = id - 1
	}
	body := sentences(src, id%50 == 7)
	if src != id {
		body = strings.Replace(body, words[0], words[1], 1)
	}
	title := fmt.Sprintf("Item %d: %s", id, words[id%len(words)])
	if id%50 == 7 {
		title = fmt.Sprintf("第%d条：%s", id, hanzi[id%len(hanzi)])
	}
	return Article{
		ID: id, Title: title, Body: body,
		Tags:  []string{category(id), words[(id*7)%len(words)]},
		Image: fmt.Sprintf("/img/%d.jpg", id),
	}
}

// sentences makes a deterministic body of about 120 words for seed.
func sentences(seed int, chinese bool) string {
	x := uint64(seed)*0x9E3779B97F4A7C15 + 1
	var b strings.Builder
	for i := 0; i < 120; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if chinese {
			b.WriteString(hanzi[x%uint64(len(hanzi))])
			if i%10 == 9 {
				b.WriteString("。")
			}
			continue
		}
		b.WriteString(words[x%uint64(len(words))])
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// HTML renders the article's page.
func (a Article) HTML() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>` + html.EscapeString(a.Title) + "</title></head><body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<div id=\"content\"><p>%s</p></div>\n", html.EscapeString(a.Title), html.EscapeString(a.Body))
	for _, t := range a.Tags {
		fmt.Fprintf(&b, "<span class=\"tag\">%s</span>\n", html.EscapeString(t))
	}
	fmt.Fprintf(&b, "<img class=\"main\" src=\"%s\">\n<script>var tracking = 1;</script>\n</body></html>\n", a.Image)
	return b.String()
}
