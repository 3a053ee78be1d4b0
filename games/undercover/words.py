"""Word pairs for Who is Undercover and short clue phrases for every word.

A pair is two related but distinct words (milk / soy milk), so the seat holding the other word is
hard to spot from a single clue. The descriptors feed the offline agent: each is a short phrase that
fits its word without naming it (or its partner), so it is always an allowed clue for that word.
"""

from __future__ import annotations

_PAIRS = """
milk / soy milk
coffee / tea
butter / margarine
honey / maple syrup
orange / tangerine
lemon / lime
strawberry / raspberry
pizza / calzone
noodles / spaghetti
dumpling / ravioli
cake / muffin
cookie / cracker
ice cream / sorbet
yogurt / cheese
bread / bagel
rice / couscous
potato / sweet potato
chocolate / caramel
soda / juice
beer / wine
salt / sugar
ketchup / mustard
sandwich / burger
apple / pear
watermelon / cantaloupe
cucumber / zucchini
onion / garlic
tomato / bell pepper
pancake / waffle
popcorn / chips
soup / stew
sushi / sashimi
peanut / almond
carrot / radish
broccoli / cauliflower
salmon / tuna
shrimp / lobster
steak / bacon
cat / dog
wolf / fox
lion / tiger
horse / donkey
rabbit / hamster
duck / goose
eagle / owl
crocodile / alligator
dolphin / shark
butterfly / moth
bee / wasp
frog / toad
sheep / goat
penguin / polar bear
mouse / rat
monkey / gorilla
spider / ant
snake / lizard
turtle / tortoise
pillow / cushion
sofa / armchair
bed / hammock
mirror / window
umbrella / raincoat
candle / lamp
spoon / fork
knife / scissors
cup / mug
towel / blanket
toothbrush / comb
soap / shampoo
broom / vacuum cleaner
fridge / freezer
microwave / oven
kettle / coffee maker
clock / watch
key / password
wallet / purse
backpack / suitcase
sweater / jacket
boots / sneakers
gloves / mittens
hat / helmet
scarf / tie
jeans / shorts
dress / skirt
necklace / bracelet
glasses / contact lenses
bicycle / motorcycle
car / taxi
bus / tram
train / subway
airplane / helicopter
boat / canoe
scooter / skateboard
truck / van
beach / desert
lake / pond
river / waterfall
mountain / volcano
forest / jungle
library / bookstore
hospital / pharmacy
school / university
restaurant / cafe
cinema / theater
museum / zoo
hotel / campsite
airport / harbor
supermarket / bakery
park / garden
swimming pool / bathtub
football / rugby
basketball / volleyball
tennis / badminton
chess / checkers
piano / organ
guitar / violin
trumpet / saxophone
painting / photograph
book / magazine
email / text message
smartphone / tablet
television / radio
camera / binoculars
pen / pencil
notebook / diary
map / compass
sun / moon
rain / snow
star / planet
doctor / nurse
teacher / professor
firefighter / police officer
chef / waiter
birthday / wedding
gold / silver
diamond / pearl
fireworks / bonfire
balloon / kite
skiing / snowboarding
yoga / meditation
tent / cabin
"""

_DESCRIPTORS = """
milk: white drink; comes from cows; poured over cereal; kept cold in the fridge; sold in cartons; good for strong bones; babies drink it; goes into a latte
soy milk: made from beans; plant-based drink; lactose free; vegan choice for cereal; popular in Asia; often sweetened with vanilla; sold in cartons
coffee: dark roasted beans; wakes you up in the morning; bitter and hot; brewed by a barista; full of caffeine; espresso is one kind; smells great when ground
tea: steeped leaves; served in a small pot; green, black or herbal; British afternoon ritual; drunk with a biscuit; made with a bag in hot water; calming warm cup
butter: yellow spread; churned from cream; melts on warm toast; used for baking pastry; sold in sticks; rich dairy fat
margarine: plant oil spread; soft in a tub; cheaper than the dairy spread; spread on toast; made from vegetable fats; cholesterol free option
honey: made by bees; sticky and golden; sweetens your tea; comes from a hive; never spoils; bears love it; drizzled on yogurt
maple syrup: poured on pancakes; from tree sap; Canadian pride; amber and sweet; boiled down in spring; sold in a small jug
orange: round citrus fruit; peel it before eating; juice at breakfast; full of vitamin C; bright color of sunset; grows in Florida; segments inside
tangerine: small citrus fruit; easy to peel; sweet segments; eaten at winter holidays; fits in a child's lunchbox; loose thin skin
lemon: sour yellow fruit; squeeze it on fish; makes lemonade; very acidic; slice in your water; zest for baking
lime: small green citrus; squeezed into a margarita; goes with tacos; sour and tangy; key pie from Florida; in a mojito
strawberry: red with seeds outside; heart-shaped fruit; picked in early summer; dipped in chocolate; served with cream at Wimbledon; grows low on the ground
raspberry: small red berry; hollow in the middle; grows on thorny canes; tart and sweet; made into jam; fuzzy tiny beads
pizza: round and sliced; tomato sauce and melted cheese; delivered in a flat box; from Naples; topped with pepperoni; baked in a hot stone oven
calzone: folded in half; filled with ricotta; half-moon shape; sealed dough pocket; baked until golden; Italian turnover
noodles: long strands; slurped from a bowl; ramen is one kind; eaten with chopsticks; instant packs for students; stir-fried in a wok
spaghetti: long thin Italian pasta; twirled on a fork; served with meatballs; boiled until al dente; bolognese sauce on top; dry sticks in a box
dumpling: dough wrapped around filling; steamed in bamboo; eaten at Lunar New Year; pleated by hand; dipped in soy sauce; pan-fried until crispy
ravioli: square pasta pockets; filled with ricotta and spinach; Italian stuffed pasta; served in tomato sauce; pressed edges with a fork; boiled then sauced
cake: baked for birthdays; candles on top; layers with frosting; sliced for guests; wedding centerpiece; sponge and icing
muffin: breakfast bake; blueberry is classic; baked in a paper cup; domed top; sold at the coffee shop; single serving
cookie: sweet baked treat; chocolate chips inside; left out for Santa; dunked in milk; comes in a jar; crunchy or chewy
cracker: crispy and salty; eaten with cheese; flat square; goes with soup; dry snack; holes poked in it
ice cream: frozen dairy dessert; served in a cone; scooped from a tub; melts in summer; vanilla is the classic; sold from a truck with music
sorbet: frozen fruit dessert; dairy free; palate cleanser between courses; icy and light; lemon or mango flavor; served in a small glass
yogurt: fermented dairy; eaten with a spoon; comes in small cups; with granola and fruit; tangy and creamy; good bacteria
cheese: aged dairy block; grated over pasta; mice love it; cheddar or brie; melted on toast; made in France and Switzerland; say it for a photo
bread: baked loaf; sliced for sandwiches; made with yeast and flour; toast in the morning; fresh from the bakery; crust and crumb
bagel: ring-shaped roll; boiled then baked; cream cheese and lox; New York breakfast; sesame or plain; chewy with a hole
rice: small white grains; staple in Asia; cooked in a steamer; served with curry; eaten with chopsticks; grown in flooded paddies
couscous: tiny semolina grains; North African staple; served with tagine; fluffed with a fork; cooks in five minutes; light side dish
potato: grows underground; mashed or fried; brown skin; made into french fries; baked in the oven; Irish staple
sweet potato: orange flesh; roasted at Thanksgiving; topped with marshmallows; sweet root vegetable; rich in vitamin A; made into fries
chocolate: made from cocoa; melts in your mouth; sold in bars; Belgian or Swiss; dark, milk or white; Valentine's gift
caramel: melted sugar; golden brown and sticky; drizzled on ice cream; salted is popular; chewy candy; toffee flavor
soda: fizzy drink; sold in cans; full of bubbles; cola is one; very sugary; served with ice at the cinema
juice: squeezed from fruit; breakfast drink; apple or orange; sold in boxes with a straw; freshly pressed; full of vitamins
beer: brewed from hops and barley; foamy head; served in a pint; drunk at the pub; Oktoberfest favorite; lager or ale
wine: made from grapes; red or white; aged in oak barrels; served in a stemmed glass; from a vineyard; uncorked at dinner
salt: white crystals; from the sea; makes food savory; in a shaker; melts ice on roads; too much raises blood pressure
sugar: white sweet crystals; added to coffee; from cane or beet; used in baking; causes cavities; cubes of sweetness
ketchup: red tomato sauce; squeezed onto fries; in a glass bottle; Heinz is famous; goes on hot dogs; sweet and tangy
mustard: yellow condiment; spicy seeds; Dijon from France; on a hot dog; tangy and sharp; comes in a squeeze bottle
sandwich: two slices with filling; packed for lunch; ham and cheese; cut into triangles; Earl invented it; eaten at a picnic
burger: grilled patty in a bun; fast food favorite; with lettuce and tomato; served with fries; cooked at a barbecue; McDonald's sells it
apple: keeps the doctor away; red or green; fell on Newton; grows in an orchard; crunchy fruit; pie filling
pear: bell-shaped fruit; green or yellow; juicy and grainy; grows on a tree; poached in wine; soft when ripe
watermelon: big green striped fruit; red inside with black seeds; eaten in summer; very juicy; seed spitting contest; heavy to carry
cantaloupe: melon with netted skin; orange flesh; sweet summer fruit; wrapped in prosciutto; round and heavy; smells sweet when ripe
cucumber: green and cool; sliced on salads; used for pickles; slices on your eyes at a spa; mostly water; long and smooth
zucchini: green summer squash; grilled in slices; made into noodles; grows huge in gardens; baked into bread; ratatouille ingredient
onion: makes you cry; layers of skin; fried in rings; base of many dishes; white, yellow or red; strong smell
garlic: cloves in a bulb; scares vampires; strong breath; crushed in a press; roasted until soft; Italian kitchen staple
tomato: red and juicy; used for sauce; fruit or vegetable debate; sliced on burgers; grows on a vine; basis of ketchup
bell pepper: crunchy and hollow; red, yellow or green; stuffed with rice; sweet not spicy; seeds inside; sliced for fajitas
pancake: flat round breakfast; stacked high; flipped in a pan; served with syrup; Shrove Tuesday; made from batter
waffle: grid pattern; crispy squares; Belgian breakfast; made in an iron; holds syrup in pockets; topped with berries
popcorn: popped kernels; eaten at the movies; buttery and salty; made in the microwave; puffs in hot oil; sold in a bucket
chips: thin fried potato slices; crunchy snack; sold in bags; salt and vinegar flavor; eaten at parties; dipped in salsa
soup: eaten with a spoon; served in a bowl; hot liquid meal; chicken noodle; good when sick; made in a big pot
stew: slow-cooked meat; thick and hearty; chunks of potato; simmered for hours; winter comfort food; beef with carrots
sushi: vinegared rice; wrapped in seaweed; Japanese dish; eaten with soy sauce; rolled with a bamboo mat; served with wasabi
sashimi: thinly sliced raw fish; no rice; Japanese delicacy; served with wasabi; needs a very sharp blade; delicate slices
peanut: grows underground; in a shell; butter for sandwiches; common allergy; sold at baseball games; elephants like them
almond: oval nut; grows on a tree; California crop; made into a plant drink; sliced on desserts; marzipan ingredient
carrot: orange root; rabbits love it; good for your eyes; nose of a snowman; crunchy and sweet; grated into cake
radish: small red root; peppery and crisp; sliced in salads; grows fast; white inside; spicy bite
broccoli: green tree-like florets; steamed vegetable; children refuse it; full of vitamins; crunchy stalk; cooked with cheese
cauliflower: white florets; made into rice substitute; roasted whole; cousin of cabbage; mashed as a low-carb side; curried in India
salmon: pink fish; swims upstream; smoked on a bagel; bears catch it; rich in omega-3; farmed in Norway
tuna: big ocean fish; sold in cans; mixed with mayo; red steaks; fast swimmer; used in sushi rolls
shrimp: small pink shellfish; curled body; grilled on skewers; cocktail starter; peeled before eating; fried in tempura
lobster: red when cooked; big claws; expensive seafood; from Maine; eaten with melted butter; boiled alive
steak: thick cut of beef; grilled rare or well done; served with fries; at a steakhouse; juicy red meat; sirloin or ribeye
bacon: crispy strips; smoked pork; sizzles in the pan; breakfast with eggs; salty and greasy; smells amazing
cat: purrs when happy; has whiskers; chases mice; independent pet; sleeps all day; always lands on its feet
dog: man's best friend; barks at strangers; wags its tail; fetches a stick; walked on a leash; loyal pet
wolf: howls at the moon; hunts in a pack; wild canine; in fairy tales; lives in forests; grey fur
fox: sly and clever; bushy red tail; lives in a den; hunts chickens; orange fur; cunning in fables
lion: king of the jungle; has a mane; roars loudly; lives in a pride; African savannah; big cat
tiger: striped big cat; orange with black stripes; lives in India; solitary hunter; swims well; endangered
horse: you ride it; gallops fast; eats hay; has a mane; wears a saddle; races at the track
donkey: stubborn animal; long ears; carries loads; brays loudly; smaller than its cousin; Shrek's friend
rabbit: long ears; hops around; eats carrots; Easter symbol; fluffy tail; lives in a burrow
hamster: small pet rodent; runs on a wheel; stores food in its cheeks; lives in a cage; nocturnal; cute and fluffy
duck: quacks; swims in ponds; webbed feet; yellow when young; waddles; rubber toy in the bath
goose: honks loudly; flies south in a V; aggressive bird; long neck; lays golden eggs in a tale; down feathers
eagle: bird of prey; soars high; national symbol of the USA; sharp talons; keen eyesight; nests on cliffs
owl: hoots at night; wise bird; turns its head around; nocturnal hunter; big eyes; Harry Potter's mail carrier
crocodile: big reptile; lives in rivers; sharp teeth; fake tears; lives in Africa and Australia; long snout
alligator: reptile in Florida swamps; broad snout; lives in the Everglades; dark scaly skin; lurks in freshwater; ancient hunter
dolphin: smart sea mammal; clicks and whistles; jumps through waves; swims in pods; friendly; breathes through a blowhole
shark: ocean predator; triangular fin; rows of teeth; Jaws; smells blood; cartilage skeleton
butterfly: colorful wings; starts as a caterpillar; flutters around flowers; symbol of change; monarch migrates; drinks nectar
moth: flies at night; drawn to lamps; dusty wings; eats clothes; brown and grey; cocoon
bee: makes honey; buzzes; lives in a hive; pollinates flowers; has a stinger; striped yellow and black
wasp: yellow and black; stings repeatedly; annoying at picnics; paper nest; narrow waist; no honey
frog: green amphibian; croaks; jumps far; catches flies with its tongue; tadpole first; prince in fairy tales
toad: warty skin; brown amphibian; dry and bumpy; hops slowly; lives in gardens; slow and squat
sheep: woolly animal; says baa; sheared in spring; herded by dogs; counted to fall asleep; flock on the hills
goat: has horns and a beard; climbs rocks; eats everything; bleats; gives milk for cheese; stubborn
penguin: flightless bird; black and white tuxedo; lives in Antarctica; waddles on ice; great swimmer; huddles in the cold
polar bear: white fur; lives in the Arctic; hunts seals; big predator; on melting ice; Coca-Cola mascot
mouse: small rodent; squeaks; eats cheese; Mickey is one; caught in a trap; scurries in walls
rat: larger rodent; lives in sewers; long tail; spread plague; lab animal; city pest
monkey: swings in trees; eats bananas; long tail; playful primate; lives in the jungle; climbs everything
gorilla: biggest ape; beats its chest; silverback; lives in African forests; King Kong; gentle giant
spider: eight legs; spins a web; catches flies; scares people; has many eyes; Charlotte's web
ant: tiny insect; lives in a colony; carries many times its weight; marches in lines; has a queen; picnic pest
snake: no legs; slithers; hisses; sheds its skin; some are venomous; forked tongue
lizard: small reptile; basks in the sun; drops its tail; climbs walls; scaly skin; gecko is one
turtle: has a shell; swims in the sea; lays eggs on the beach; Ninja cartoon; slow on land; sea grass eater
tortoise: land reptile with a shell; lives over a hundred years; very slow; won the race against the hare; eats lettuce; Galapagos giant
pillow: you rest your head on it; soft and fluffy; feather stuffing; in a case; fight with it; on the bed
cushion: soft square on the sofa; decorative; sat on; throw for the couch; stuffed and covered; pad for a chair
sofa: seats three people; in the living room; you watch TV on it; upholstered; a couch; nap spot
armchair: seats one person; has arms; comfy reading seat; upholstered; next to the fireplace; grandpa's seat
bed: where you sleep; has a mattress; sheets and duvet; in the bedroom; make it every morning; bunk or double
hammock: swings between two trees; woven net; hung on a beach; lazy afternoon; made of rope; sways gently
mirror: shows your reflection; on the bathroom wall; magic one in Snow White; breaks for seven years bad luck; used to check hair; glass and silver
window: lets in light; made of glass; you look out of it; opens for fresh air; curtains cover it; on the wall of a house
umbrella: keeps rain off; opens up; carried on wet days; has spokes; Mary Poppins flies with it; also shades from sun
raincoat: waterproof jacket; yellow with a hood; worn in storms; plastic or rubber; keeps you dry; Paddington wears one
candle: wax and wick; burns with a flame; on a birthday cake; romantic dinner; scented; melts slowly
lamp: gives light; on a desk or bedside; has a shade; plugged in; bulb inside; switch on
spoon: for soup; round bowl; stirs coffee; eaten with cereal; silverware; feeds a baby
fork: has prongs; for spaghetti; eaten with a knife; tines; silverware; stab your food
knife: cuts food; sharp blade; used by a chef; butter spreader; in a block; has a handle
scissors: two blades; cut paper; used in crafts; hairdresser's tool; rock paper; handles for fingers
cup: holds drinks; has a handle; on a saucer; tea for one; trophy for a winner; small vessel
mug: big drinking vessel; for hot cocoa; printed slogans; ceramic; coffee at the office; heavy handle
towel: dries you off; after a shower; fluffy cotton; beach essential; hangs on a rail; wrap it around your hair
blanket: keeps you warm; on the bed; woolly; picnic spread; wrap on the couch; security for kids
toothbrush: cleans teeth; bristles; used twice a day; with paste; electric or manual; in the bathroom
comb: has teeth; tidies hair; plastic; pocket-sized; parting; untangles
soap: cleans hands; lathers; bar or liquid; bubbles; smells nice; wash with it
shampoo: washes hair; lather; bottle in the shower; conditioner partner; scented; rinse and repeat
broom: sweeps the floor; bristles on a stick; witch's ride; with a dustpan; brush; tidies up
vacuum cleaner: sucks up dust; noisy; carpet cleaning; has a bag; plugged in; robot version
fridge: keeps food cold; in the kitchen; has a door light; magnets on it; holds milk; humming appliance
freezer: very cold; holds ice cream; makes ice cubes; frozen peas; below zero; frost inside
microwave: heats food fast; beeps; popcorn; spinning plate; reheat leftovers; no metal inside
oven: bakes bread; hot box; roasts chicken; preheat; has racks; bakery's heart
kettle: boils water; whistles; for tea; spout; electric or stovetop; switches off itself
coffee maker: brews in the morning; filter; pot; machine; drip; barista at home
clock: tells time; on the wall; ticks; has hands; alarm; chimes
watch: on your wrist; tells time; strap; Swiss made; smart version; gift
key: opens locks; metal; on a ring; door; car; lost often
password: secret; login; characters; change it; protect account; forgot it
wallet: holds money; cards; in pocket; leather; fold; ID
purse: handbag; carried by women; coins; clasp; strap; accessory
backpack: worn on back; school bag; straps; hiking; zippers; carries books
suitcase: travel luggage; wheels; packed for holiday; airport; handle; checked in
sweater: knitted; wool; pullover; warm; worn in winter; ugly holiday one
jacket: outerwear; zip; pockets; leather or denim; worn over shirt; layer
boots: tall footwear; for rain or snow; leather; cowboy; ankle; hiking
sneakers: sports shoes; running; laces; rubber soles; Nike; casual
gloves: cover hands; fingers; winter; leather; boxing; garden
mittens: hands warm; no separate fingers; children; knitted; winter; on a string
hat: on your head; brim; sun protection; cowboy; top; beanie
helmet: protects head; hard; bike; motorcycle; construction; astronaut
scarf: around your neck; knitted; winter; silk; fashion; long
tie: worn with a suit; around the collar; knot; office; formal; silk
jeans: denim; blue; pants; Levi's; pockets; casual
shorts: above knee; summer; legs bare; sports; beach; casual
dress: one piece; worn by women; party; summer; wedding; elegant
skirt: waist down; women's; pleated; mini; school uniform; flowy
necklace: around the neck; chain; pendant; gold; pearls; jewelry
bracelet: on the wrist; bangle; charm; beads; jewelry; chain
glasses: help you see; lenses; frames; on your nose; reading; optician
contact lenses: in your eyes; invisible; soft; daily; optician; no frames
bicycle: two wheels and pedals; ridden to work; has a chain; Tour de France; ring the bell; no engine
motorcycle: two wheels with an engine; loud exhaust; rider wears leathers; Harley-Davidson; fast on the highway; kickstand
car: four wheels; drive to work; needs fuel; parked in a garage; has a steering wheel; family road trip
taxi: yellow in New York; pay the meter; hail it on the street; driver for hire; back seat ride; ride to the airport
bus: big public vehicle; many seats; stops at shelters; school ride; double decker in London; pay a fare
tram: runs on rails in the street; electric overhead wires; city streetcar; rings a bell; Lisbon's yellow one; stops in the middle of the road
train: runs on tracks; has carriages; leaves from a station; locomotive; steam engine once; conductor checks tickets
subway: underground rail; metro; tunnels under the city; rush hour crowds; mind the gap; map with colored lines
airplane: flies in the sky; has wings; pilot in the cockpit; takes off from a runway; jet engines; flight attendant
helicopter: spinning rotor blades; hovers in place; lands on rooftops; rescue flights; chopper; vertical take-off
boat: floats on water; has a hull; sails or motor; docks at a pier; fishing trips; rocks on waves
canoe: paddled by hand; narrow and light; river trips; sits two; tips over easily; no motor
scooter: kick it along; two small wheels; handlebar; Vespa in Rome; electric rental; kids ride
skateboard: four wheels on a deck; tricks at the park; ollie; grip tape; Tony Hawk; rolled on ramps
truck: big vehicle; carries cargo; eighteen wheels; long-haul driver; pickup; diesel
van: boxy vehicle; delivery driver; sliding door; moving house; camper; seats a band
beach: sand and waves; sunbathing; seashells; towel and umbrella; coast; summer holiday
desert: hot and dry; sand dunes; camels; cactus; oasis; Sahara
lake: still freshwater; surrounded by land; fishing and rowing; Geneva and Como; mountains around; swim in summer
pond: small still water; ducks swim; frogs and lily pads; garden feature; goldfish; freezes in winter
river: flowing water; runs to the sea; has banks; bridges cross it; Nile or Amazon; current
waterfall: water drops over a cliff; Niagara; roaring; mist and rainbows; plunge pool; cascade
mountain: high peak; snow on top; climbers; Everest; hiking trails; alpine
volcano: erupts; lava and ash; crater; Vesuvius; magma; smoking cone
forest: many trees; woodland; deer; hiking; fallen leaves; home of Robin Hood
jungle: tropical rainforest; vines; monkeys; humid; Amazon; dense green
library: borrow books; quiet please; librarian; shelves; reading room; card
bookstore: buy books; shop with shelves; bestsellers; browse; cashier; new releases
hospital: doctors and nurses; emergency room; ambulance; patients; surgery; beds
pharmacy: medicine shop; prescriptions; pills; chemist; counter; drugs
school: classrooms; students; homework; bell rings; playground; uniforms
university: college; degree; lectures; campus; graduation; dorm
restaurant: eat out; menu; chef; reservation; tip; dinner
cafe: coffee shop; pastries; small tables; latte; barista; wifi
cinema: watch films; big screen; popcorn; tickets; dark room; premiere
theater: plays on stage; actors; curtain; Broadway; audience; Shakespeare
museum: exhibits; history; artifacts; guided tour; dinosaur bones; quiet halls
zoo: animals in enclosures; keepers; feeding time; safari park; lions and giraffes; family day out
hotel: rooms; reception; room service; stay overnight; check in; chain
campsite: tents; campfire; outdoors; pitch; sleeping bags; woods
airport: planes; terminals; security check; gates; luggage; runway
harbor: boats moor; port; docks; fishermen; lighthouse; sheltered water
supermarket: groceries; aisles; trolley; checkout; Walmart; weekly shop
bakery: fresh bread; pastries; flour; ovens; croissants; morning smell
park: green space; benches; playground; dog walkers; ducks; picnic
garden: flowers; backyard; plants; gardener; vegetables; hedge
swimming pool: chlorine water; lanes; diving board; lifeguard; outdoor summer; goggles
bathtub: in the bathroom; bubble bath; soak; rubber duck; faucet; drain plug
football: eleven players; round ball; goals; FIFA; World Cup; penalty kick
rugby: oval ball; scrum; tackles; try line; New Zealand; All Blacks
basketball: hoop; dribble; NBA; Michael Jordan; slam dunk; court
volleyball: net; spike; beach game; six players; serve; bump and set
tennis: racket and ball; Wimbledon; serve; net; court; Federer
badminton: shuttlecock; racket; net; light; Asia; indoor
chess: board game; kings and queens; checkmate; strategy; pawns; grandmaster
checkers: board game; jump pieces; red and black; kings; simple; draughts
piano: black and white keys; grand; pedals; pianist; concert; Mozart
organ: pipes; church; pedals; loud; Bach; cathedral
guitar: six strings; strum; acoustic or electric; rock band; pick; frets
violin: four strings; bow; orchestra; chin rest; classical; fiddle
trumpet: brass; valves; loud; jazz; fanfare; mouthpiece
saxophone: jazz; reed; curved; brass; smooth; Bill Clinton played one
painting: canvas; oil colors; brush; Mona Lisa; gallery wall; artist
photograph: camera shot; print; album; snapshot; selfie; frame
book: pages; chapters; author; read; cover; novel
magazine: glossy; monthly; articles; cover model; subscription; fashion issue
email: inbox; sent online; subject line; spam; attachment; Gmail
text message: SMS; phone; short; emoji; typing; chat
smartphone: touch screen; apps; iPhone; camera; calls; pocket
tablet: iPad; larger screen; touch; apps; drawing; reading
television: screen; remote; channels; news; shows; couch
radio: music; stations; talk shows; antenna; car; frequency
camera: takes pictures; lens; shutter; flash; photographer; zoom
binoculars: two lenses; see far; birdwatching; strap; magnify; opera
pen: ink; writes; ballpoint; click; signature; blue
pencil: graphite; eraser on the end; sharpen; sketch; school; yellow
notebook: paper pages; lined; spiral; school; notes; notepad
diary: private thoughts; daily; lock; journal; secrets; teenage
map: shows places; directions; atlas; fold; streets; treasure
compass: points north; needle; navigation; magnet; hiking; direction
sun: star; daytime; warm; sunrise; bright; solar
moon: night; crescent; tides; lunar; full; astronaut
rain: falls from clouds; wet; drops; umbrella weather; puddles; drizzle
snow: white flakes; cold; winter; snowman; skiing; Christmas
star: twinkles at night; in the sky; shape; celebrity; constellation; wish upon
planet: orbits the sun; Earth; Mars; solar system; round; astronomy
doctor: diagnoses; stethoscope; hospital; white coat; prescription; physician
nurse: cares for patients; hospital; scrubs; injections; ward; shift
teacher: classroom; lessons; homework; school; students; blackboard
professor: university; lectures; research; tenure; academic; PhD
firefighter: fire truck; hoses; rescue; helmet; station; brave
police officer: uniform; badge; arrests; patrol car; law; siren
chef: cooks; kitchen; apron; hat; menu; recipes
waiter: serves food; tips; restaurant; tray; takes orders; tables
birthday: cake; candles; presents; party; yearly; age
wedding: bride; groom; vows; rings; church; ceremony
gold: precious metal; yellow; jewelry; Olympic first; bars; expensive
silver: metal; shiny grey; second place; cutlery; coins; jewelry
diamond: precious stone; hardest; sparkles; engagement; carats; forever
pearl: grows in an oyster; white; jewelry; necklace; sea; luster
fireworks: explosions; New Year; sky; colors; bang; celebration
bonfire: big outdoor fire; wood; Guy Fawkes; marshmallows; camp; flames
balloon: inflated; party; floats; helium; pops; colorful
kite: flies in wind; string; tail; beach; diamond shape; Ben Franklin
skiing: snow; poles; slopes; Alps; winter sport; lift
snowboarding: snow; board; tricks; half pipe; winter sport; slopes
yoga: poses; mat; stretch; India; breathing; flexibility
meditation: calm mind; breathing; sitting still; mindfulness; Buddhist; quiet
tent: camping shelter; poles; canvas; pitch it; sleeping bag; outdoors
cabin: wooden house; woods; log; fireplace; lake; retreat
"""


def _parse_pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for line in text.strip().splitlines():
        first, second = (part.strip() for part in line.split(" / "))
        pairs.append((first, second))
    return pairs


def _parse_descriptors(text: str) -> dict[str, tuple[str, ...]]:
    table = {}
    for line in text.strip().splitlines():
        word, _, phrases = line.partition(": ")
        table[word.strip()] = tuple(phrase.strip() for phrase in phrases.split(";"))
    return table


PAIRS: list[tuple[str, str]] = _parse_pairs(_PAIRS)
DESCRIPTORS: dict[str, tuple[str, ...]] = _parse_descriptors(_DESCRIPTORS)
