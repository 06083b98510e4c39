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
transit climate election vaccine robot orbit novel theater harvest ocean
airport bakery canal castle cinema clinic coast cottage desert district
factory farm ferry fountain gallery glacier highway hospital island kitchen
lake lighthouse meadow mine monastery mountain office orchard palace park
pier plaza prison quarry railway reef refinery reservoir road ruin school
shipyard shore stadium statue stream street studio subway summit swamp
temple tower tunnel valley village vineyard volcano warehouse waterfall
wharf workshop zoo against among during toward within without because
although while after before build carry decide explain follow gather
improve measure notice offer prepare protect reduce report share support
travel visit warn answer borrow celebrate compare discover invite repair`)

var hanzi = strings.Fields(`城市 经济 科技 教育 文化 体育 环境 交通 健康 艺术 新闻 发展
河流 议会 能源 学校 音乐 花园 科学 联赛 博物馆 港口 预算 节日 车站 桥梁 森林 图书馆
气候 选举 疫苗 机器人 轨道 小说 剧院 收获 海洋 机场 面包店 运河 城堡 电影院 诊所 海岸
沙漠 工厂 农场 渡轮 喷泉 画廊 冰川 公路 医院 岛屿 厨房 湖泊 灯塔 草地 山脉 办公室
果园 宫殿 公园 码头 广场 铁路 水库 道路 废墟 船厂 体育场 雕像 溪流 街道 工作室 地铁
山顶 寺庙 塔楼 隧道 山谷 村庄 葡萄园 火山 仓库 瀑布 动物园 居民 官员 研究 计划 调查`)

// ArticleFor returns detail id's article. Every 25th article is a repost
// of the one before it under another URL, with one word of the body
// changed: a near-duplicate. Every 50th page (id%50 == 7) is in Chinese.
func ArticleFor(id int) Article {
	if id%25 == 0 && id > 1 {
		a := ArticleFor(id - 1)
		a.ID = id
		first, _, _ := strings.Cut(a.Body, " ")
		a.Body = strings.Replace(a.Body, first, "reposted", 1)
		return a
	}
	chinese := id%50 == 7
	title := fmt.Sprintf("Item %d: %s", id, words[id%len(words)])
	if chinese {
		title = fmt.Sprintf("第%d条：%s", id, hanzi[id%len(hanzi)])
	}
	return Article{
		ID: id, Title: title, Body: sentences(id, chinese),
		Tags:  []string{category(id), words[(id*7)%len(words)]},
		Image: fmt.Sprintf("/img/%d.jpg", id),
	}
}

// IsRepost reports whether detail id is a near-duplicate of id-1.
func IsRepost(id int) bool { return id%25 == 0 && id > 1 }

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
