"""A scripted "reasonable person" for Who is Undercover, held out from the offline agent.

The clues below were written the way people at a table phrase them: whole sentences, everyday
words, some vague ("you see it a lot in summer"), none taken from the agent's descriptor list in
``games.undercover.words``. They exist to measure whether the agents treat a person fairly
(``benchmarks/undercover_fairness.py``); the agent never reads them.
"""

from __future__ import annotations

import random

from games.undercover.engine import clue_problem, normalise

_PEOPLE = """
milk: I pour it on my breakfast every morning | Kids drink a glass of it before bed | It is what calves feed on | It goes sour if you leave it out | Cheese is made from it
soy milk: My vegan friend puts it in her coffee | It is made without any animal | Some people drink it because dairy upsets their stomach | It tastes a bit nutty
coffee: I cannot start my day without a cup | People queue for it at the station in the morning | It keeps me awake when I study late | You can get it iced in summer
tea: My grandmother offers it to every guest | You let it brew for a few minutes | Some people add a splash of milk to it | There are hundreds of herbal kinds
honey: It comes out of a jar with a wooden dipper | Winnie the Pooh is always eating it | I put it in warm water when I have a sore throat | It can crystallise in the cupboard
maple syrup: People in Canada are very proud of it | You pour it over a stack at brunch | It comes from trees in the north | It is thick and brown and very sweet
lemon: It makes your face pucker | I put a slice in my water | People squeeze it over seafood | Its juice can clean stains
lime: Bartenders cut it into wedges | It is green and really sour | It goes into a lot of Mexican food | You squeeze it into a cocktail
strawberry: You pick it in summer at a farm | It has tiny seeds on the outside | It is great with whipped cream | Shortcake is made with it
raspberry: It falls apart easily when you pick it | It grows on a prickly bush | It is red and a bit fuzzy | Jam made from it has lots of little seeds
pizza: We order it on Friday nights | You eat it with your hands from a box | Everyone argues about pineapple on it | It comes in slices
calzone: It looks like a big folded pocket | The cheese is hidden inside | You bake it in the oven like a pie | It is basically a closed version of a famous Italian dish
cake: We bake one for every birthday | You blow out candles on it | There is usually frosting on top | People cut it into slices at weddings
muffin: You can grab one with your coffee in the morning | It is baked in a little paper cup | Blueberry is a popular kind | It has a round top that spills over
apple: Teachers used to get one as a present | One a day keeps the doctor away | It can be red or green and crunchy | It fell on Newton's head
pear: It is wider at the bottom than at the top | It gets soft and juicy when it is ripe | It is a green fruit shaped a bit like a bell | You can poach it in wine
cat: It purrs when you pet it | It likes to sleep in the sun | It chases mice | It lands on its feet
dog: It wags its tail when you come home | You take it for walks in the park | It fetches sticks and balls | It is called man's best friend
lion: It is called the king of the jungle | The male has a big mane | It lives on the African savanna | It roars very loudly
tiger: It has orange fur with black stripes | It is a huge wild cat from Asia | It hunts alone in the forest | Some of them are white
horse: People ride it in races | It eats hay and oats | You put a saddle on it | It gallops across fields
donkey: It is known for being stubborn | It carries heavy loads up the hill | It makes a loud braying sound | It has long ears and is smaller than a pony
duck: It quacks | It swims in the pond in the park | Kids feed it bread | It has webbed feet and a flat bill
goose: It honks very loudly | It flies south in a V shape | It can be quite aggressive if you get close | It lays golden eggs in a fairy tale
bee: It buzzes around flowers | It makes something sweet | It lives in a hive with a queen | It can sting you
wasp: It ruins picnics in late summer | It is yellow and black and can sting you again and again | It builds a papery nest | Everyone is scared of it
frog: It hops and says ribbit | It catches flies with its tongue | It starts life as a tadpole | A princess kisses it in a story
toad: It has dry bumpy skin | It walks more than it jumps | People say touching it gives you warts | It is brown and likes damp gardens
spoon: You eat soup with it | You stir your tea with it | Babies are fed with it | It is round at one end
fork: It has prongs | You twirl pasta with it | It sits on the left of your plate | You stab your food with it
cup: You drink from it | It often has a handle | It comes with a saucer | You measure flour with it in baking
mug: It is big and holds a lot of hot chocolate | People give it as a gift with a funny slogan | It is thick and heavy | It sits on my desk all day
umbrella: You open it when it pours | It is easy to leave on the train | It flips inside out in the wind | You carry it on cloudy days
raincoat: You wear it when it is wet outside | It is often yellow with a hood | It keeps you dry on a walk | Fishermen wear one
bicycle: It has two wheels and pedals | You ride it to work to stay fit | You need to learn to balance on it | It has a bell and a chain
motorcycle: It is loud and fast | You need a helmet and a licence to ride it | Bikers wear leather jackets on it | It has a powerful engine and two wheels
car: Most families have one in the driveway | You need a licence to drive it | It has four wheels and seat belts | You fill it up at the petrol station
taxi: You wave your hand to stop one | You pay the driver at the end | It is yellow in New York | It has a meter inside
train: It runs on rails between cities | You can buy a ticket at the station | It has many carriages | It can be delayed by leaves on the line
subway: It runs underground in big cities | You tap your card at the gate | It is crowded in rush hour | There is a map of coloured lines
airplane: You fly in it on holiday | You go through security before boarding | It has wings and engines | There is a pilot in the cockpit
helicopter: It has blades that spin on top | It can land on a roof | Rescue teams use it in the mountains | It can hover in one place
beach: You lie on the sand in summer | You build castles there | There are waves and seagulls | People put on sunscreen there
desert: It is very dry and hot | Camels walk across it | There are huge sand dunes | It gets cold at night
lake: You can row a boat on it | It is a big body of fresh water | People fish there on weekends | Some have a monster legend
pond: Ducks and frogs live in it | It is a small pool in a garden or park | It is often covered with lily pads | Kids go there to look for tadpoles
forest: Lots of tall trees grow close together there | You can get lost on a hike there | Deer and owls live there | It smells of pine and moss
jungle: It is hot and humid with vines everywhere | Monkeys swing through it | You find it near the equator | Tarzan lived there
mountain: People climb it with ropes | There is snow on the top | Everest is the highest one | You can ski down it
volcano: It can erupt | Lava comes out of it | Pompeii was destroyed by one | There are many of them in Iceland and Hawaii
library: You have to be quiet there | You can borrow things and bring them back | It is full of shelves | You need a card to use it
bookstore: You can buy the latest bestseller there | It sometimes has a cafe inside | People browse for hours | It is a shop full of stories
hospital: You go there in an ambulance | Doctors and nurses work there day and night | Babies are born there | It has an emergency room
pharmacy: You pick up your prescription there | It has a green cross sign | You buy cough medicine there | The person behind the counter gives advice on pills
school: Kids go there every weekday | There is a bell between lessons | You have homework from there | There is a playground
university: Students go there after high school | You get a degree there | There are lectures in big halls | Many students live in dorms there
restaurant: You book a table there for dinner | A waiter takes your order | You leave a tip | There is a menu
cafe: I meet friends there for a latte | It is a small place with cakes on the counter | People work on laptops there | It smells of fresh espresso
cinema: You watch new films there on a big screen | You buy popcorn there | It is dark and you have to stay quiet | There are trailers before the film
theater: Actors perform live on a stage | There is a curtain and an interval | Shakespeare plays are shown there | You clap at the end
sun: It rises in the east | It gives us light and warmth | You should not look straight at it | It sets in the evening
moon: It changes shape during the month | Wolves howl at it | Astronauts walked on it | It comes out at night
rain: It falls from grey clouds | You need an umbrella for it | It makes puddles | Plants need it to grow
snow: Kids build a man out of it | It is white and cold | It falls in winter | School is cancelled when there is a lot of it
doctor: You see one when you are sick | They listen to your heart | They write prescriptions | They went to medical school for years
nurse: They take care of patients on the ward | They give you injections | They work long shifts in scrubs | Florence Nightingale was one
teacher: They mark homework | They stand in front of a class of children | They have summer holidays | They write on a whiteboard
professor: They give lectures at a university | They do research and write papers | Students call them doctor | They supervise a PhD
guitar: It has six strings | People play it around a campfire | Rock stars smash it on stage | You strum it
violin: You play it with a bow | It sits under your chin | It is in every orchestra | It can sound very sad
book: You read it before bed | It has chapters and a cover | You can borrow it | Some are made into films
magazine: It comes out every month | It has glossy pages and ads | You read it in the waiting room | It has celebrities on the cover
pen: You write with it in ink | It can run out | You click it | You sign documents with it
pencil: You can erase what it writes | You sharpen it | It is made of wood and graphite | Kids use it at school
gold: Olympic winners get it | It is a shiny yellow metal | Pirates hide it in chests | People invest in it
silver: Second place gets it | It is a shiny grey metal | Forks and spoons were once made of it | It tarnishes over time
football: It is the most popular sport in the world | Two teams try to score in a net | You cannot use your hands | The World Cup is for it
rugby: Players throw an oval ball backwards | It is very physical with scrums | New Zealand is famous for it | You score a try
chess: You move a knight and a bishop | The goal is checkmate | It is played on a board with black and white squares | Grandmasters play it
checkers: You jump over your opponent's pieces | All pieces are round and flat | When you reach the end you get a king | It is a simple board game for kids
"""


def _parse(text: str) -> dict[str, tuple[str, ...]]:
    table = {}
    for line in text.strip().splitlines():
        word, _, clues = line.partition(": ")
        table[word.strip()] = tuple(clue.strip() for clue in clues.split(" | "))
    return table


PEOPLE_CLUES: dict[str, tuple[str, ...]] = _parse(_PEOPLE)


class ScriptedPerson:
    """Gives the next of its held-out clues that the rules allow (or passes), and votes like a
    reasonable person: for the player whose clues have least to do with its own word, judged by
    every description of that word it knows (its own and the dictionary's)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    async def act(self, observation: dict) -> dict:
        if observation["phase"] == "vote":
            return self.vote(observation)
        word = observation["word"]
        clues = list(PEOPLE_CLUES.get(word, ()))
        random.Random(f"{self.seed}:{word}").shuffle(clues)
        said = frozenset(normalise(c["text"]) for c in observation["clues"] if c["text"])
        for clue in clues:
            if clue_problem(clue, word, said) is None:
                return {"type": "clue", "text": clue}
        return {"type": "clue", "text": None}

    def vote(self, observation: dict) -> dict:
        from games.undercover.agents import content_words
        from games.undercover.words import DESCRIPTORS

        word = observation["word"]
        known = set(content_words(word))
        for phrase in (*PEOPLE_CLUES.get(word, ()), *DESCRIPTORS.get(word, ())):
            known |= content_words(phrase)
        targets = [a["targets"] for a in observation["legal_actions"] if a["type"] == "vote"]
        fits = {}
        for seat in targets[0] if targets else []:
            words: set[str] = set()
            for clue in observation["clues"]:
                if clue["seat"] == seat and clue["text"]:
                    words |= content_words(clue["text"])
            fits[seat] = len(words & known) / len(words) if words else 0.5
        if not fits:
            return {"type": "vote", "target": None}
        lowest = min(fits.values())
        rng = random.Random(f"{self.seed}:{observation['seat']}:{observation['vote_round']}")
        return {"type": "vote", "target": rng.choice([s for s, f in fits.items() if f == lowest])}
