;; Makes one ledger world per (seed, split, index): the worlds of ledger-totals' generator.js.
;; Everything it draws comes from `rand`, which the sandbox starts from the world's seed in
;; every call, so the same request always gives the same world.
(ns ledger-totals.generator)

(def payees ["Bakery Huber" "City Power" "Rent" "Bookshop" "Rail ticket" "Pharmacy"
             "Hardware store" "Internet" "Cafe Linde" "Insurance" "Market stall" "Cinema"])

(defn- cents [c]
  (let [a (abs c)
        r (mod a 100)]
    (str (if (neg? c) "-" "") (quot a 100) "." (if (< r 10) (str "0" r) r))))

(defn- payment
  "One line of the ledger and its amount in cents; draws refund?, amount, day, payee."
  [split]
  (let [refund? (and (= split :test) (< (rand) 0.15))
        amount (* (if refund? -1 1) (+ 100 (rand-int 20000)))
        day (inc (rand-int 28))
        payee (nth payees (rand-int (count payees)))]
    [(str "2025-03-" (if (< day 10) (str "0" day) day) "," payee "," (cents amount)) amount]))

(defn generate [{:keys [split index params]}]
  ;; Train worlds are short; test worlds are longer and have refunds.
  (let [rows (if (= split :train) (+ 4 (rand-int 5)) (+ 8 (rand-int 9)))
        payments (vec (repeatedly rows #(payment split)))
        total (reduce + (map second payments))]
    {:files {"/docs/ledger.csv" (str (apply str "date,payee,amount\n"
                                            (map #(str (first %) "\n") payments)))
             "/docs/README.md" (str "Ledger " (inc index) " (" (name split) "), amounts in "
                                    (:currency params) ".\n")}
     ;; The shape of a case pack's gold: builtin:reference answers with :expected.
     :gold {:expected {:rows rows :total (/ total 100)}}}))
