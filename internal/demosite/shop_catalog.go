package demosite

import (
	"fmt"
	"strconv"
	"strings"
)

// ShopOptions shapes the demo shop. Zero values take the defaults.
type ShopOptions struct {
	// Categories is the number of top categories (default 3), each with
	// SubCategories sub-categories (default 2), each listing Products
	// products (default 12), PerPage to a list page (default 5).
	Categories, SubCategories, Products, PerPage int
}

func (o *ShopOptions) applyDefaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Categories, 3)
	def(&o.SubCategories, 2)
	def(&o.Products, 12)
	def(&o.PerPage, 5)
}

// How a product is reached, besides the sitemap, which lists them all.
const (
	ReachList    = "list"    // on its sub-category's list pages
	ReachRelated = "related" // only through the related links of the product before it
	ReachAPI     = "api"     // only through the JSON API's "load more" pages
)

// reach says how product id is reached: every tenth only through a
// related link, every tenth from the fifth only through the API.
func reach(id int) string {
	switch id % 10 {
	case 0:
		return ReachRelated
	case 5:
		return ReachAPI
	}
	return ReachList
}

// inAPI reports whether the API lists product id: the API-only ones, and
// every tenth from the third, which the lists show too.
func inAPI(id int) bool { return id%10 == 5 || id%10 == 3 }

var (
	shopBrands = []string{"Aurora", "Borealis", "Cirrus", "Dune"}
	shopTags   = []string{"5G", "OLED", "eSIM", "refurbished", "bestseller"}
	shopCats   = []string{"phones", "laptops", "audio", "cameras", "tablets", "watches", "tv", "games"}
)

// product is one product of the shop, as its page shows it.
type product struct {
	id    int
	price float64
	// format writes the price in one of the shop's locales.
	format priceFormat
}

// priceFormat writes a price as one locale does: thousands separator,
// decimal separator, decimals, and the currency before or after.
type priceFormat struct {
	before, after string
	thousands     string
	decimal       string
	decimals      int
}

// priceFormats are the locales the shop's products rotate through.
var priceFormats = []priceFormat{
	{before: "$", thousands: ",", decimal: ".", decimals: 2},                 // $1,299.00
	{after: " €", thousands: ".", decimal: ",", decimals: 2},                 // 1.299,00 €
	{after: " zł", thousands: "\u00a0", decimal: ",", decimals: 2},           // 1 299,50 zł
	{before: "¥", thousands: ",", decimals: 0},                               // ¥12,000
	{before: "USD ", thousands: ",", decimal: ".", decimals: 2},              // USD 1,234.50
	{before: "CHF ", thousands: "'", decimal: ".", decimals: 2, after: ".-"}, // CHF 1'299.50.-
}

func (s *Shop) product(id int) product {
	f := priceFormats[id%len(priceFormats)]
	price := float64(id*12345%300000+999) / 100
	if f.decimals == 0 {
		price = float64(id*1500%30000 + 1000)
	}
	return product{id: id, price: price, format: f}
}

// text writes the price in the product's locale.
func (p product) text() string {
	f := p.format
	whole := strconv.FormatInt(int64(p.price), 10)
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(f.thousands)
		}
		b.WriteRune(d)
	}
	if f.decimals > 0 {
		cents := int64(p.price*100+0.5) % 100
		fmt.Fprintf(&b, "%s%02d", f.decimal, cents)
	}
	return f.before + b.String() + f.after
}

func (p product) name() string {
	return fmt.Sprintf("%s %s %d", p.brand(), strings.ToUpper(shopCats[p.id%len(shopCats)][:1]), p.id)
}
func (p product) brand() string { return shopBrands[p.id%len(shopBrands)] }
func (p product) sku() string   { return fmt.Sprintf("SKU-%05d", p.id) }
func (p product) date() string {
	return fmt.Sprintf("2024-%02d-%02dT10:30:00+08:00", p.id%12+1, p.id%28+1)
}

func (p product) tags() []string {
	return []string{shopTags[p.id%len(shopTags)], shopTags[(p.id+2)%len(shopTags)]}
}

// sub is one sub-category: its category and its products' IDs, those on
// its list pages first.
type sub struct {
	cat, name string
	ids       []int
}

// catalog lays the products out over the sub-categories, in order.
func (s *Shop) catalog() []sub {
	var subs []sub
	id := 1
	for c := 0; c < s.opts.Categories; c++ {
		for k := 0; k < s.opts.SubCategories; k++ {
			sb := sub{cat: shopCats[c%len(shopCats)] + strconv.Itoa(c/len(shopCats)+1), name: fmt.Sprintf("s%d", k+1)}
			for range s.opts.Products {
				sb.ids = append(sb.ids, id)
				id++
			}
			subs = append(subs, sb)
		}
	}
	return subs
}

// listed is a sub-category's products that its list pages show.
func (sb sub) listed() []int {
	var out []int
	for _, id := range sb.ids {
		if reach(id) == ReachList {
			out = append(out, id)
		}
	}
	return out
}

// lastID is the highest product ID.
func (s *Shop) lastID() int { return s.opts.Categories * s.opts.SubCategories * s.opts.Products }

// related is what product id's related links point to: the next product
// when only a related link reaches it, and the one after that.
func (s *Shop) related(id int) []int {
	var out []int
	for _, r := range []int{id + 1, id + 2} {
		if r <= s.lastID() {
			out = append(out, r)
		}
	}
	return out
}

// apiIDs are the products the JSON API lists, in order.
func (s *Shop) apiIDs() []int {
	var out []int
	for id := 1; id <= s.lastID(); id++ {
		if inAPI(id) {
			out = append(out, id)
		}
	}
	return out
}
